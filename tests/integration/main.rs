//! One integration-test binary (one link): modules per area.

mod authored_files;
mod cassette;
mod commits;
mod corpus;
mod delegation;
mod endpoint_limit;
mod example;
mod fuzz;
mod governed_origins;
mod history;
mod hostile_ids;
mod hostile_paths;
mod mcp;
mod memory_files;
mod model_answers;
mod model_client;
mod model_faults;
mod model_stream;
mod module_cycles;
mod reference;
mod resume;
mod runtime;
mod runtime_writes;
mod scripted_server;
mod sessions;
mod workspace;
