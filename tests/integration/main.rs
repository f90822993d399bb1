//! One integration-test binary (one link): modules per area.

mod commits;
mod corpus;
mod example;
mod fuzz;
mod model_client;
mod runtime;
mod scripted_server;
mod sessions;
mod workspace;
