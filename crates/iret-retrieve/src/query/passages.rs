//! A long task read by passages: the model sees a 256-token window, so a report's
//! prefix is all it would read of it (often the title and the start of a code snippet).
//! The task is cut into passages at line boundaries, each about one window long; each
//! is embedded and their vectors are joined, the first (the title and the opening
//! prose) weighing most.
use super::words::is_long;

/// About one model window (256 word pieces) of text, in characters.
pub const PASSAGE_CHARS: usize = 900;

/// The task's passages, at most `max` (a short task, or `max` ≤ 1: the task itself).
/// Lines are kept whole (a line longer than a passage is one passage); blank-only
/// passages are dropped.
pub fn passages(task: &str, max: usize) -> Vec<String> {
    if max <= 1 || !is_long(task) {
        return vec![task.to_string()];
    }
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    for line in task.lines() {
        if !current.is_empty() && current.len() + line.len() + 1 > PASSAGE_CHARS {
            push(&mut out, std::mem::take(&mut current));
            if out.len() == max {
                return out;
            }
        }
        if !current.is_empty() {
            current.push('\n');
        }
        current.push_str(line);
    }
    push(&mut out, current);
    out.truncate(max);
    out
}

fn push(out: &mut Vec<String>, passage: String) {
    if passage.split_whitespace().next().is_some() {
        out.push(passage);
    }
}

/// The unit vector of `vectors` joined: the first weighs 1, each later one `later`.
pub fn join(vectors: &[Vec<f32>], later: f32) -> Vec<f32> {
    let Some(first) = vectors.first() else {
        return Vec::new();
    };
    let mut v = first.clone();
    for other in &vectors[1..] {
        v.iter_mut().zip(other).for_each(|(x, y)| *x += later * y);
    }
    iret_embed::normalize(&mut v);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(lines: usize) -> String {
        (0..lines)
            .map(|i| format!("line {i} of a long report about the queryset union ordering bug"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn a_short_task_is_one_passage() {
        assert_eq!(passages("rate limiting", 3), ["rate limiting"]);
        let long = report(40);
        assert_eq!(passages(&long, 1), vec![long.clone()]);
    }

    #[test]
    fn a_long_task_is_cut_at_lines_into_at_most_max_passages() {
        let long = report(60);
        let p = passages(&long, 3);
        assert_eq!(p.len(), 3);
        assert!(p.iter().all(|x| x.len() <= PASSAGE_CHARS), "{p:?}");
        assert!(p[0].starts_with("line 0 "));
        // Whole lines, in order, nothing between the passages lost.
        let joined = p.join("\n");
        assert!(long.starts_with(&joined));
        let all = passages(&long, 100);
        assert_eq!(all.join("\n"), long);
    }

    #[test]
    fn joined_vectors_are_unit_and_lean_to_the_first() {
        let v = join(&[vec![1.0, 0.0], vec![0.0, 1.0]], 0.5);
        assert!((v.iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-5);
        assert!(v[0] > v[1]);
        assert_eq!(join(&[vec![0.6, 0.8]], 0.5), vec![0.6, 0.8]);
    }
}
