//! iobound: runs the same I/O-bound service work on each concurrency model, side by side,
//! under the same load, and reports what each one delivers and costs.

mod analysis;
mod bench;
mod cli;
mod compare;
mod contender;
mod database;
mod corpus;
mod downstream;
mod driver;
mod env;
mod faults;
mod fuzz;
mod http1;
mod kafka;
mod interrupt;
mod manifest;
mod orchestrate;
mod pipeline;
mod plan;
mod progress;
mod report;
mod results;
mod sampler;
mod serve;
mod services;
mod stats;
mod table;
mod util;
mod verify;

fn main() {
    let code = match cli::main() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("iobound: error: {e:#}");
            1
        }
    };
    interrupt::kill_all(libc::SIGKILL);
    std::process::exit(code);
}
