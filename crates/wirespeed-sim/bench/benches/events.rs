//! Simulated events per second of the CSMA/CD model: one of the seed's long-net tests (24 hosts,
//! 64-byte packets, the busiest case) for 50 ms of simulated time.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use wirespeed_sim::{Scenario, run};

fn scenario(hosts: usize, bytes: u64) -> Scenario {
    Scenario {
        warmup_ns: 0,
        measure_ns: 50_000_000,
        seed: 1,
        ..Scenario::seed_long_net(hosts, bytes)
    }
}

fn events(c: &mut Criterion) {
    let mut group = c.benchmark_group("csma");
    for (hosts, bytes) in [(24, 64), (4, 64), (24, 1536)] {
        let s = scenario(hosts, bytes);
        let events = run(&s).expect("valid scenario").events;
        group.throughput(Throughput::Elements(events));
        group.bench_function(format!("{hosts}_hosts_{bytes}_bytes_50ms"), |b| {
            b.iter(|| run(&s).expect("valid scenario"))
        });
    }
    group.finish();
}

criterion_group!(benches, events);
criterion_main!(benches);
