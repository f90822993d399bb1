//! The store contract every store passes (`archmax_machine::store::contract`), against
//! PostgreSQL.

mod common;

archmax_machine::store_contract_suite!(pg_suite, crate::common::store("suite"));
