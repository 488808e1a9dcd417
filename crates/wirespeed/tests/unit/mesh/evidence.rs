use wirespeed::mesh::evidence::*;
use wirespeed_model::mesh::faults::HostEvidence;

#[test]
fn the_counters_over_the_mesh_are_the_difference_and_unknown_stays_unknown() {
    let ports = vec![
        Some(LabPort {
            lab: "star".into(),
            node: "h1".into(),
            ceiling_bits_per_second: Some(9.4e7),
        }),
        None,
    ];
    let c = |collisions, late_collisions, crc_errors| {
        Some(PortCounters {
            collisions,
            late_collisions,
            crc_errors,
        })
    };
    let e = evidence(&ports, &[c(5, 1, 2), None], &[c(9, 4, 2), None]);
    assert_eq!(e[0].collisions, Some(4));
    assert_eq!(e[0].late_collisions, Some(3));
    assert_eq!(e[0].crc_errors, Some(0));
    assert_eq!(e[0].link_ceiling_bits_per_second, Some(9.4e7));
    assert_eq!(e[1], HostEvidence::default());
    assert!(source(&ports).is_some_and(|s| s.contains("lab star")));
    assert_eq!(source(&[None]), None);
}
