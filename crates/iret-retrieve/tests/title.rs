//! A report is read by its title: the file defining what the title names leads, found
//! through the package's re-export when the title writes the public name (`pk.where`,
//! `import pkg as pk`) or through the class that qualifies it (`Variable.__setitem__`),
//! while the names the body's example uses (`pk.DataArray(...)`) lift nothing.
mod common;

use common::{embedder, indexed, write};
use iret_retrieve::{run, Corpus, Options, Params, Query};
use std::path::Path;

/// A package whose public names live in other modules; `where` is defined in four files.
fn sources(r: &Path) {
    write(
        r,
        "pkg/__init__.py",
        "from .core.computation import (\n    polyval,\n    where,\n)\nfrom .core.dataarray import DataArray\nfrom .core.variable import Variable\n",
    );
    write(
        r,
        "pkg/core/computation.py",
        "def where(cond, x, y, keep_attrs=None):\n    return apply_ufunc(cond, x, y, keep_attrs=keep_attrs)\n\n\ndef polyval(coord, coeffs):\n    return sum(c * coord for c in coeffs)\n",
    );
    write(
        r,
        "pkg/core/dataarray.py",
        "class DataArray:\n    def __init__(self, values):\n        self.values = values\n\n    def where(self, cond, other=None):\n        return DataArray(self.values if cond else other)\n\n    def variable(self):\n        return self.values\n",
    );
    write(
        r,
        "pkg/core/variable.py",
        "class Variable:\n    def where(self, cond, other=None):\n        return self\n\n    def __setitem__(self, key, value):\n        self.values[key] = value\n",
    );
    write(
        r,
        "pkg/core/common.py",
        "def where(cond, x, y):\n    return x if cond else y\n\n\ndef full_like(other, fill_value):\n    return fill_value\n",
    );
}

/// (path, reason) of every evaluated file, in the answer's order.
fn answer(corpus: &Corpus, task: &str, params: Params) -> Vec<(String, String)> {
    let opts = Options {
        params,
        ..Options::default()
    };
    run(corpus, &embedder(), &Query::new(task), &opts)
        .unwrap()
        .evaluated
        .into_iter()
        .map(|e| (e.path, e.reason))
        .collect()
}

/// A report: the title, an example that builds a `DataArray`, and prose.
fn report(title: &str, call: &str) -> String {
    format!(
        "{title}\n\nWhen I run the example below the result loses what I gave it, and I expected \
         it to keep everything the input carried along with it, as the documentation says it \
         should do for every object of the library.\n\n```python\nimport pkg as pk\n\n\
         da = pk.DataArray([1, 2, 3], attrs={{'units': 'm'}})\nresult = {call}\n```\n"
    )
}

#[test]
fn the_public_name_a_title_writes_leads_to_the_file_its_package_re_exports_it_from() {
    let src = tempfile::tempdir().unwrap();
    sources(src.path());
    let (_idx, corpus) = indexed(src.path());
    let task = report(
        "pk.where not preserving attributes",
        "pk.where(da > 1, da, 0)",
    );
    let got = answer(&corpus, &task, Params::default());
    assert_eq!(got[0].0, "pkg/core/computation.py", "{got:?}");
    assert!(got[0].1.contains("which the title names"), "{got:?}");
    // Read as a whole, the report's example wins.
    let whole = Params {
        title_boost: 0.0,
        report_body_share: 1.0,
        report_body_name_share: 1.0,
        ..Params::default()
    };
    let got = answer(&corpus, &task, whole);
    assert_eq!(got[0].0, "pkg/core/dataarray.py", "{got:?}");
}

#[test]
fn a_qualified_title_name_leads_to_the_file_of_its_qualifier_as_written() {
    let src = tempfile::tempdir().unwrap();
    sources(src.path());
    let (_idx, corpus) = indexed(src.path());
    // `dataarray.py` defines a `variable` method too: the class `Variable` is meant.
    let task = report(
        "Variable.__setitem__ coercing types on objects with a values property",
        "da.variable()[0] = 1",
    );
    let got = answer(&corpus, &task, Params::default());
    assert_eq!(got[0].0, "pkg/core/variable.py", "{got:?}");
    assert!(got[0].1.contains("which the title names"), "{got:?}");
}
