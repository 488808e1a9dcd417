//! One length mix of a load plan, typed in memory and written in `--lengths` syntax.
//!
//! A results file keeps its plan's mixes and each finished test's mix as the text `--lengths`
//! reads ("64", "6/2", "64:6+1536:2"): a reader can see them, and every file written so far
//! still resumes. In memory they are [`LengthMix`] values, so a resumed series matches its
//! finished tests to the plan by value, never by comparing text.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use wirespeed_sim::LengthMix;

use super::{mix_spec, parse_mix};

/// A length mix as a load plan and its records hold it; (de)serialized as `--lengths` text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Lengths(pub(crate) LengthMix);

impl From<LengthMix> for Lengths {
    fn from(mix: LengthMix) -> Lengths {
        Lengths(mix)
    }
}

impl std::fmt::Display for Lengths {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&mix_spec(&self.0))
    }
}

impl Serialize for Lengths {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&mix_spec(&self.0))
    }
}

impl<'de> Deserialize<'de> for Lengths {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Lengths, D::Error> {
        // A results file is read before anything else is checked: the text is parsed by the
        // same bounded parser as `--lengths`, and one that is not a single mix is refused.
        let text = String::deserialize(d)?;
        parse_mix(&text)
            .map(Lengths)
            .map_err(|e| serde::de::Error::custom(format!("lengths {text:?}: {e:#}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
