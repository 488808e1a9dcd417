use wirespeed::load::result::*;
use wirespeed_sim::LengthMix;

#[test]
fn each_syntax_reads_back_to_the_text_it_was_written_as() {
    for text in ["64", "1536", "6/2", "64:6+1536:2"] {
        let json = format!("\"{text}\"");
        let mix: Lengths = serde_json::from_str(&json).unwrap();
        assert_eq!(serde_json::to_string(&mix).unwrap(), json);
        assert_eq!(mix.to_string(), text);
    }
    let ratio: Lengths = serde_json::from_str("\"6/2\"").unwrap();
    assert_eq!(ratio.0, LengthMix::seed_ratio(6, 2));
}

#[test]
fn text_that_is_not_one_mix_is_refused() {
    for bad in ["\"seed\"", "\"64,1536\"", "\"huge\"", "\"6/0\"", "64"] {
        assert!(serde_json::from_str::<Lengths>(bad).is_err(), "{bad}");
    }
}
