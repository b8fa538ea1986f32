//! Fuzzing the chunker: random bytes and mutated real code, per language. The chunker
//! must never panic and every chunk must be well-formed.
//!
//! Short run in `cargo test`; a long run:
//! `IRET_FUZZ_SECS=600 cargo test --release -p iret-chunk --test fuzz -- --nocapture`
use iret_chunk::{chunk, Language, Limits};
use std::time::{Duration, Instant};

const SEEDS: &[&str] = &[
    "export class Router {\n  use(fn: Handler) { this.stack.push(fn); }\n}\nexport type A = { b: string };\n",
    "function f(a, b) {\n  return a.map(x => ({ ...x, b }));\n}\napp.get = function get(p) { return p; };\n",
    "class A:\n    @property\n    def x(self):\n        return [i for i in range(3)]\n\ndef g(*a, **k):\n    pass\n",
    "impl<T: Clone> Foo<T> {\n    pub fn bar(&self) -> Option<&T> { self.0.first() }\n}\nmacro_rules! m { () => {} }\n",
    "package x\n\nfunc (e *Engine) Run(addr ...string) (err error) {\n\treturn nil\n}\ntype T struct{ a int }\n",
    "public final class G {\n  @Override public <T> T from(String s) { return null; }\n  enum E { A, B }\n}\n",
];

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn mutate(rng: &mut Rng, seed: &str) -> String {
    let mut bytes = seed.as_bytes().to_vec();
    for _ in 0..1 + rng.below(12) {
        let at = rng.below(bytes.len() + 1);
        match rng.below(5) {
            0 if !bytes.is_empty() => {
                bytes.remove(at.min(bytes.len() - 1));
            }
            1 => {
                let punct = b"{}()[]<>;:'\"\n\t\\/*#@$`";
                bytes.insert(at, punct[rng.below(punct.len())]);
            }
            2 => {
                let from = rng.below(bytes.len() + 1);
                let to = (from + rng.below(40)).min(bytes.len());
                let piece = bytes[from..to].to_vec();
                for (i, b) in piece.into_iter().enumerate() {
                    bytes.insert((at + i).min(bytes.len()), b);
                }
            }
            3 => bytes.insert(at, rng.next() as u8),
            _ => bytes.extend(std::iter::repeat_n(b'(', rng.below(300))),
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

#[test]
fn chunker_never_panics_on_random_and_mutated_input() {
    let budget = std::env::var("IRET_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .map_or(Duration::from_secs(3), Duration::from_secs);
    let langs: Vec<Option<Language>> = std::iter::once(None)
        .chain(Language::ALL.iter().copied().map(Some))
        .collect();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let started = Instant::now();
    let mut cases = 0u64;
    while started.elapsed() < budget {
        let src = if rng.below(4) == 0 {
            let raw: Vec<u8> = (0..rng.below(2000)).map(|_| rng.next() as u8).collect();
            String::from_utf8_lossy(&raw).into_owned()
        } else {
            let seed = SEEDS[rng.below(SEEDS.len())];
            mutate(&mut rng, seed)
        };
        let limits = Limits {
            max: 64 + rng.below(2000),
            min: rng.below(400),
        };
        for &lang in &langs {
            let lines = src.lines().count().max(1);
            let t = Instant::now();
            let chunks = chunk(&src, lang, limits);
            // A parse is bounded (0.5 s + 2 µs/byte); far beyond that is a hang.
            assert!(
                t.elapsed() < Duration::from_secs(5),
                "{lang:?} took {:?} on {src:?}",
                t.elapsed()
            );
            for c in chunks {
                assert!(
                    c.start_line >= 1 && c.start_line <= c.end_line && c.end_line <= lines + 1,
                    "bad span {c:?} for {src:?}"
                );
            }
        }
        cases += 1;
    }
    eprintln!(
        "fuzz: {cases} inputs × {} languages in {:?} without a panic",
        langs.len(),
        started.elapsed()
    );
    assert!(cases > 0);
}
