mod codeword;
mod resolve;
mod verdict;

use wirespeed_model::autoneg::*;
use wirespeed_model::envelope::Duplex;

#[test]
fn seed_003_table1_priority_order() {
    let names: Vec<&str> = Technology::BY_PRIORITY.iter().map(|t| t.name()).collect();
    assert_eq!(
        names,
        [
            "1000BASE-T full duplex",
            "1000BASE-T",
            "100BASE-T2 full duplex",
            "100BASE-TX full duplex",
            "100BASE-T2",
            "100BASE-T4",
            "100BASE-TX",
            "10BASE-T full duplex",
            "10BASE-T",
        ]
    );
    assert_eq!(Technology::Base1000TFull.priority(), 1);
    assert_eq!(Technology::Base10THalf.priority(), 9);
}

#[test]
fn modes_parse_in_the_forms_people_write() {
    for (text, t) in [
        ("100-full", Technology::Base100TxFull),
        ("100full", Technology::Base100TxFull),
        ("100/Full", Technology::Base100TxFull),
        ("10-HALF", Technology::Base10THalf),
        ("100BASE-TX", Technology::Base100TxHalf),
        ("1000fd", Technology::Base1000TFull),
        ("100-t4", Technology::Base100T4),
    ] {
        assert_eq!(text.parse::<Technology>(), Ok(t), "{text}");
    }
    assert!("100".parse::<Technology>().is_err());
    assert!("fast".parse::<Technology>().is_err());
    assert_eq!(
        "10/100".parse::<Abilities>().unwrap(),
        Abilities::fast_ethernet()
    );
    let set: Abilities = "10-half, 100-full".parse().unwrap();
    assert_eq!(
        set.iter().collect::<Vec<_>>(),
        [Technology::Base100TxFull, Technology::Base10THalf]
    );
    assert_eq!("".parse::<Abilities>(), Err(ModeError::Empty));
}

#[test]
fn every_short_name_parses_back() {
    for t in Technology::BY_PRIORITY {
        assert_eq!(t.short().parse::<Technology>(), Ok(t));
        assert_eq!(t.half_duplex().pma(), t.pma());
        assert_eq!(t.half_duplex().duplex(), Duplex::Half);
    }
}
