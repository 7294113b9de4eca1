//! iobound: arguments -> plan -> services -> contenders -> driver -> results -> report.
//! Everything lives in the library (lib.rs); this is the process's entry and exit.

fn main() {
    let code = match iobound::cli::main() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("iobound: error: {e:#}");
            1
        }
    };
    iobound::util::interrupt::kill_all(libc::SIGKILL);
    std::process::exit(code);
}
