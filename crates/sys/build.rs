//! Stops a build for another operating system before it starts, with one sentence: orchestra
//! runs on Linux only (it reads /proc, and uses prctl, sched_setattr and child subreapers),
//! and a build elsewhere would otherwise end in a wall of missing symbols.

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if os != "linux" {
        let sentence = format!(
            "orchestra runs on Linux only (it reads /proc and uses prctl, sched_setattr and child subreapers), not on {os}; build it on Linux, or in a Linux VM or container"
        );
        println!("cargo::error={sentence}");
        eprintln!("error: {sentence}");
        std::process::exit(1);
    }
}
