use proptest::prelude::*;
use wirespeed_model::autoneg::codeword::*;
use wirespeed_model::autoneg::{Abilities, Technology};

/// Words as Linux's mii.h spells them (ADVERTISE_*), to check the bit layout both ways.
static WORDS: [(u16, &str); 4] = [
    (0x0001, "IEEE 802.3: no technology"),
    (
        0x01E1,
        "IEEE 802.3: 100BASE-TX full duplex, 100BASE-TX, 10BASE-T full duplex, 10BASE-T",
    ),
    (0x0421, "IEEE 802.3: 10BASE-T; PAUSE"),
    (
        0xC5E1,
        "IEEE 802.3: 100BASE-TX full duplex, 100BASE-TX, 10BASE-T full duplex, 10BASE-T; PAUSE; no remote fault; acknowledged; next page follows",
    ),
];

#[test]
fn mii_register_values_decode() {
    for (bits, summary) in WORDS {
        let page = BasePage::parse(LinkCodeWord::new(bits));
        assert!(
            page.summary().starts_with(summary),
            "{bits:#06x}: {}",
            page.summary()
        );
        assert_eq!(page.emit().bits(), bits);
    }
}

#[test]
fn seed_003_figure4_example_11110000_is_0x01e1() {
    // Seed 003 §3.3: "If the first four bits are set to logic 1 the device is capable of
    // 10BASE-T, 10BASE-T with full duplex, 100BASE-TX, and 100BASE-TX with full duplex
    // (e.g. 11110000)", with selector 00001 (IEEE 802.3).
    let page = BasePage::advertising(Abilities::fast_ethernet(), false, false);
    assert_eq!(page.emit(), LinkCodeWord::new(0x01E1));
    assert_eq!(
        page.technology_bits, 0b0000_1111,
        "A0..A3 set, A0 first in the seed"
    );
    assert_eq!(page.selector.bits(), 0b00001);
    let ten_only =
        BasePage::advertising(Abilities::NONE.with(Technology::Base10THalf), false, false);
    assert_eq!(ten_only.emit().bits(), 0x0021, "10000000: 10BASE-T only");
}

#[test]
fn fields_are_set_and_cleared_independently() {
    let mut w = LinkCodeWord::new(0);
    w.set_next_page(true);
    w.set_acknowledge(true);
    w.set_remote_fault(true);
    assert_eq!(w.bits(), 0xE000);
    w.set_technology(0xFF);
    w.set_selector(0x1F);
    assert_eq!(w.bits(), 0xFFFF);
    w.set_acknowledge(false);
    w.set_technology(0);
    assert_eq!(w.bits(), 0xA01F);
    w.set_selector(0x21);
    assert_eq!(w.selector(), 1, "masked to five bits");
}

#[test]
fn gigabit_advertisement_needs_a_next_page() {
    let page = BasePage::advertising(Abilities::gigabit(), true, false);
    assert!(page.next_page);
    assert_eq!(page.emit().bits(), 0x85E1);
    assert_eq!(page.abilities(), Some(Abilities::fast_ethernet()));
}

#[test]
fn hex_and_binary_parse() {
    let parse = |s: &str| s.parse::<LinkCodeWord>().map(LinkCodeWord::bits);
    assert_eq!(parse("0x01E1"), Ok(0x01E1));
    assert_eq!(parse("01e1"), Ok(0x01E1));
    assert_eq!(parse("1E1"), Ok(0x01E1));
    assert_eq!(parse("0X41e1"), Ok(0x41E1));
    assert_eq!(parse("0b0000_0001_1110_0001"), Ok(0x01E1));
    assert_eq!(parse("0x0000"), Ok(0));
    assert_eq!(parse("0x000001E1"), Ok(0x01E1));
    assert!(matches!(
        parse("0x10000"),
        Err(CodeWordError::TooWide { .. })
    ));
    assert!(matches!(
        parse("0xFFFFFFFFFFFFFFFFFF"),
        Err(CodeWordError::TooWide { .. })
    ));
    assert!(matches!(
        parse("0xGG"),
        Err(CodeWordError::NotANumber { .. })
    ));
    assert!(matches!(parse(""), Err(CodeWordError::NotANumber { .. })));
    assert!(matches!(parse("0x"), Err(CodeWordError::NotANumber { .. })));
    assert_eq!(LinkCodeWord::new(0x1e1).to_string(), "0x01E1");
}

#[test]
fn other_selectors_are_not_read_as_802_3() {
    let page = BasePage::parse(LinkCodeWord::new(0x01E2));
    assert_eq!(page.selector, Selector::Ieee8029);
    assert_eq!(page.abilities(), None);
    assert!(page.summary().contains("not 802.3 abilities"));
    assert_eq!(
        BasePage::parse(LinkCodeWord::new(0x001F)).selector,
        Selector::Reserved(31)
    );
}

#[test]
fn every_word_round_trips_exactly() {
    for bits in 0..=u16::MAX {
        let word = LinkCodeWord::new(bits);
        let page = BasePage::parse(word);
        assert_eq!(page.emit(), word, "{bits:#06x}");
        assert_eq!(page.emit().to_string().parse::<LinkCodeWord>(), Ok(word));
    }
}

proptest! {
    #[test]
    fn pages_round_trip(
        selector in 0u8..32, technology_bits: u8, remote_fault: bool,
        acknowledge: bool, next_page: bool,
    ) {
        let page = BasePage {
            selector: Selector::from_bits(selector),
            technology_bits, remote_fault, acknowledge, next_page,
        };
        prop_assert_eq!(BasePage::parse(page.emit()), page);
        prop_assert_eq!(page.fields().len(), 12);
    }

    #[test]
    fn advertised_abilities_come_back(mask in 0u16..512, pause: bool, asym: bool) {
        let abilities: Abilities = wirespeed_model::autoneg::Technology::BY_PRIORITY
            .into_iter()
            .filter(|t| mask & (1 << (*t as u16)) != 0)
            .collect();
        let page = BasePage::parse(BasePage::advertising(abilities, pause, asym).emit());
        let base_only = abilities.intersection(Abilities::fast_ethernet().with(Technology::Base100T4));
        prop_assert_eq!(page.abilities(), Some(base_only));
        prop_assert_eq!(page.pause(), pause);
        prop_assert_eq!(page.asym_pause(), asym);
        prop_assert_eq!(page.next_page, abilities != base_only);
    }

    #[test]
    fn any_text_parses_or_errs_without_panicking(text in ".{0,24}") {
        let _ = text.parse::<LinkCodeWord>();
    }
}
