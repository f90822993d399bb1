//! One integration-test binary (one link): modules per area.

mod corpus;
mod example;
mod fuzz;
mod model_client;
mod model_faults;
mod runtime;
mod scripted_server;
mod sessions;
mod workspace;
