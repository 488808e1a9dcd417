mod autoneg;
mod cli;
mod common;
mod deploy;
mod diagnose;
mod envelope;
mod lab;
mod latency;
mod load;
mod mesh;
mod model;
mod probe;
mod report;
mod reproduce;
mod serve;
mod sim;
mod sweep;
mod throughput;

/// A command's flags alone, as its subcommand parses them.
#[derive(clap::Parser)]
struct Flags<A: clap::Args> {
    #[command(flatten)]
    args: A,
}

/// `argv` parsed as `command`'s flags (`command` stands where the program's name would be).
pub(crate) fn parse_flags<A: clap::Args>(command: &str, argv: &[&str]) -> Result<A, clap::Error> {
    <Flags<A> as clap::Parser>::try_parse_from(std::iter::once(command).chain(argv.iter().copied()))
        .map(|f| f.args)
}
