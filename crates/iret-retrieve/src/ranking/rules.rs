//! The hand-set ranker: dispatch's score as a weighted sum of the signal features, each
//! weight a field of [`Params`], tests and the like damped by `noise_factor`. The learned
//! ranker ([`super::learned`]) reads the same features.
use super::features::Features;
use crate::params::Params;

/// The rules' dispatch score of a file with these features.
pub fn score(f: &Features, p: &Params) -> f32 {
    let mut score = f.coherence;
    score += f.body_share * (p.define_boost * f.defines);
    score += p.name_boost * f.name_share;
    score += p.spelled_boost * f.spelled;
    score += p.path_boost * f.path_words;
    score += p.mention_boost * f.mentioned;
    score += p.raise_boost * f.raised;
    score += p.message_boost * f.raises;
    score += f.body_share * (p.api_boost * f.implements);
    score += p.title_boost * f.titled;
    score += p.history_messages * f.history_messages;
    score += p.history_similar * f.history_similar;
    score += p.history_refs * f.history_refs;
    score += p.history_fixes * f.history_fixes;
    if f.noise > 0.0 {
        score *= p.noise_factor;
    }
    score + f.focus
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_signal_weighs_by_its_param_and_noise_damps_all_but_the_aim() {
        let p = Params::default();
        let base = Features {
            coherence: 0.5,
            body_share: 1.0,
            ..Features::default()
        };
        assert_eq!(score(&base, &p), 0.5);
        let named = Features {
            mentioned: 1.0,
            ..base
        };
        assert!((score(&named, &p) - (0.5 + p.mention_boost)).abs() < 1e-6);
        let noisy = Features {
            noise: 1.0,
            focus: 0.1,
            ..named
        };
        let want = (0.5 + p.mention_boost) * p.noise_factor + 0.1;
        assert!((score(&noisy, &p) - want).abs() < 1e-6);
    }
}
