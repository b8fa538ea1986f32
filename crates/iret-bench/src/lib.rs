//! `iret bench`: retrieval quality and speed on semble-format benchmarks.
pub mod dataset;
pub mod metrics;
pub mod report;
pub mod runner;

pub use runner::{run_bench, Config, Mode, RepoRun};
