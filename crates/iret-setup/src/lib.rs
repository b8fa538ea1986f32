//! `iret setup <agent>`: iret's MCP server written into a coding agent's own configuration
//! file, in the format and place each agent documents, merged into what is there: other
//! servers, other settings, comments and layout are kept (JSON and JSONC files are edited
//! through a concrete syntax tree, `jsonc-parser`; TOML through `toml_edit`), and a
//! second run changes nothing. Only the keys iret's entry needs are written; keys a user
//! added to it (an `env`, a timeout) stay.
use anyhow::{bail, Context};
use jsonc_parser::cst::{CstInputValue, CstObject, CstRootNode};
use jsonc_parser::ParseOptions;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The name iret's server is registered under.
pub const SERVER: &str = "iret";

/// Where an agent's configuration lives, relative to the user's folders.
#[derive(Clone, Copy)]
enum Place {
    /// Under the home folder.
    Home(&'static str),
    /// Under the user's configuration folder (`$XDG_CONFIG_HOME`, else `~/.config`; on
    /// macOS `~/.config` too; on Windows `%APPDATA%`).
    Config(&'static str),
    /// Under VS Code's user folder (Linux `~/.config/Code/User`, macOS
    /// `~/Library/Application Support/Code/User`, Windows `%APPDATA%\Code\User`).
    VsCodeUser(&'static str),
    /// Codex's home: `$CODEX_HOME`, else `~/.codex`.
    CodexHome(&'static str),
}

/// How the server entry is written.
#[derive(Clone, Copy)]
enum Format {
    /// A JSON (or JSONC) file: the entry goes into the object at `key` of the root.
    Json {
        key: &'static str,
        entry: fn(&str) -> Value,
    },
    /// Codex's TOML: a `[mcp_servers.iret]` table.
    CodexToml,
}

pub struct Agent {
    /// What the user types: `iret setup cursor`.
    pub id: &'static str,
    pub name: &'static str,
    place: Place,
    format: Format,
    /// Where the format is documented.
    pub docs: &'static str,
}

fn plain(command: &str) -> Value {
    json!({ "command": command, "args": ["mcp"] })
}

/// Every agent `iret setup` knows.
pub const AGENTS: &[Agent] = &[
    Agent {
        id: "claude-code",
        name: "Claude Code (user scope)",
        place: Place::Home(".claude.json"),
        format: Format::Json {
            key: "mcpServers",
            entry: |c| json!({ "type": "stdio", "command": c, "args": ["mcp"], "env": {} }),
        },
        docs: "https://code.claude.com/docs/en/mcp",
    },
    Agent {
        id: "codex",
        name: "Codex CLI",
        place: Place::CodexHome("config.toml"),
        format: Format::CodexToml,
        docs: "https://developers.openai.com/codex/mcp/",
    },
    Agent {
        id: "gemini",
        name: "Gemini CLI",
        place: Place::Home(".gemini/settings.json"),
        format: Format::Json {
            key: "mcpServers",
            entry: plain,
        },
        docs: "https://github.com/google-gemini/gemini-cli/blob/main/docs/tools/mcp-server.md",
    },
    Agent {
        id: "cursor",
        name: "Cursor",
        place: Place::Home(".cursor/mcp.json"),
        format: Format::Json {
            key: "mcpServers",
            entry: plain,
        },
        docs: "https://docs.cursor.com/context/model-context-protocol",
    },
    Agent {
        id: "vscode",
        name: "VS Code (user profile)",
        place: Place::VsCodeUser("mcp.json"),
        format: Format::Json {
            key: "servers",
            entry: |c| json!({ "type": "stdio", "command": c, "args": ["mcp"] }),
        },
        docs: "https://code.visualstudio.com/docs/copilot/reference/mcp-configuration",
    },
    Agent {
        id: "zed",
        name: "Zed",
        place: Place::Config("zed/settings.json"),
        format: Format::Json {
            key: "context_servers",
            entry: |c| json!({ "source": "custom", "command": c, "args": ["mcp"], "env": {} }),
        },
        docs: "https://zed.dev/docs/ai/mcp",
    },
    Agent {
        id: "windsurf",
        name: "Windsurf",
        place: Place::Home(".codeium/windsurf/mcp_config.json"),
        format: Format::Json {
            key: "mcpServers",
            entry: plain,
        },
        docs: "https://docs.windsurf.com/windsurf/cascade/mcp",
    },
    Agent {
        id: "opencode",
        name: "opencode",
        place: Place::Config("opencode/opencode.json"),
        format: Format::Json {
            key: "mcp",
            entry: |c| json!({ "type": "local", "command": [c, "mcp"], "enabled": true }),
        },
        docs: "https://opencode.ai/docs/mcp-servers",
    },
    Agent {
        id: "cline",
        name: "Cline (VS Code extension)",
        place: Place::VsCodeUser(
            "globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
        ),
        format: Format::Json {
            key: "mcpServers",
            entry: |c| json!({ "command": c, "args": ["mcp"], "disabled": false }),
        },
        docs: "https://docs.cline.bot/mcp/configuring-mcp-servers",
    },
];

/// The agent `id` names, or an error listing the known ones.
pub fn agent(id: &str) -> anyhow::Result<&'static Agent> {
    AGENTS.iter().find(|a| a.id == id).with_context(|| {
        let known: Vec<&str> = AGENTS.iter().map(|a| a.id).collect();
        format!(
            "no agent called `{id}`; iret sets up: {} (`iret setup --list`)",
            known.join(", ")
        )
    })
}

/// The user's folders, as the agents find them.
#[derive(Debug, Clone)]
pub struct Folders {
    pub home: PathBuf,
    pub xdg_config: Option<PathBuf>,
    pub appdata: Option<PathBuf>,
    pub codex_home: Option<PathBuf>,
}

impl Folders {
    /// From this process's environment (`HOME`/`USERPROFILE`, `XDG_CONFIG_HOME`,
    /// `APPDATA`, `CODEX_HOME`).
    pub fn from_env() -> anyhow::Result<Self> {
        let var = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let home = var("HOME")
            .or_else(|| var("USERPROFILE"))
            .context("neither HOME nor USERPROFILE is set: iret cannot find your home folder")?;
        Ok(Self {
            home,
            xdg_config: var("XDG_CONFIG_HOME"),
            appdata: var("APPDATA"),
            codex_home: var("CODEX_HOME"),
        })
    }

    fn config(&self) -> PathBuf {
        if cfg!(windows) {
            if let Some(a) = &self.appdata {
                return a.clone();
            }
        }
        if cfg!(target_os = "linux") {
            if let Some(x) = &self.xdg_config {
                return x.clone();
            }
        }
        self.home.join(".config")
    }

    fn vscode_user(&self) -> PathBuf {
        if cfg!(target_os = "macos") {
            self.home.join("Library/Application Support/Code/User")
        } else if cfg!(windows) {
            self.appdata
                .clone()
                .unwrap_or_else(|| self.home.join("AppData/Roaming"))
                .join("Code/User")
        } else {
            self.config().join("Code/User")
        }
    }
}

impl Agent {
    /// The configuration file this agent reads, on this machine.
    pub fn path(&self, f: &Folders) -> PathBuf {
        match self.place {
            Place::Home(rel) => f.home.join(rel),
            Place::Config(rel) => f.config().join(rel),
            Place::VsCodeUser(rel) => f.vscode_user().join(rel),
            Place::CodexHome(rel) => f
                .codex_home
                .clone()
                .unwrap_or_else(|| f.home.join(".codex"))
                .join(rel),
        }
    }

    /// iret's entry as this agent's format writes it, for `command` (the iret binary).
    pub fn snippet(&self, command: &str) -> String {
        match self.format {
            Format::Json { key, entry } => {
                let doc = json!({ key: { SERVER: entry(command) } });
                serde_json::to_string_pretty(&doc).expect("JSON serialises")
            }
            Format::CodexToml => {
                let mut doc = toml_edit::DocumentMut::new();
                set_codex(&mut doc, command);
                doc.to_string()
            }
        }
    }

    /// What setting up changes in `text` (the file's content; `None`: no file yet): the
    /// new content, or `None` when the entry is there already.
    pub fn merge(&self, text: Option<&str>, command: &str) -> anyhow::Result<Option<String>> {
        match self.format {
            Format::Json { key, entry } => merge_json(text, key, &entry(command)),
            Format::CodexToml => merge_codex(text, command),
        }
    }
}

/// What `setup` did or would do.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The file now holds the entry (created, or merged into).
    Written(PathBuf),
    /// The entry was there already: nothing written.
    Unchanged(PathBuf),
}

/// Writes iret's entry for `command` into `agent`'s configuration (atomically: a
/// temporary file renamed over it), creating the file and its folders if needed.
pub fn setup(agent: &Agent, folders: &Folders, command: &str) -> anyhow::Result<Outcome> {
    let path = agent.path(folders);
    let before = match std::fs::read_to_string(&path) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let Some(after) = agent
        .merge(before.as_deref(), command)
        .with_context(|| refusal(agent, &path, command))?
    else {
        return Ok(Outcome::Unchanged(path));
    };
    write_atomic(&path, &after)?;
    Ok(Outcome::Written(path))
}

fn refusal(agent: &Agent, path: &Path, command: &str) -> String {
    format!(
        "{} was left as it is; add this to it by hand ({}):\n{}",
        path.display(),
        agent.docs,
        agent.snippet(command)
    )
}

fn write_atomic(path: &Path, text: &str) -> anyhow::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("writing into {}", dir.display()))?;
    std::io::Write::write_all(&mut tmp, text.as_bytes())
        .with_context(|| format!("writing {}", path.display()))?;
    // Keep the permissions of the file replaced (a config holding tokens may be 0600).
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(tmp.path(), meta.permissions());
    }
    tmp.persist(path)
        .with_context(|| format!("replacing {}", path.display()))?;
    Ok(())
}

/// `value` as the CST's input.
fn to_input(value: &Value) -> CstInputValue {
    match value {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(a) => CstInputValue::Array(a.iter().map(to_input).collect()),
        Value::Object(o) => {
            CstInputValue::Object(o.iter().map(|(k, v)| (k.clone(), to_input(v))).collect())
        }
    }
}

fn merge_json(text: Option<&str>, key: &str, entry: &Value) -> anyhow::Result<Option<String>> {
    let source = text.filter(|t| !t.trim().is_empty()).unwrap_or("{}\n");
    let opts = ParseOptions::default();
    let current = jsonc_parser::parse_to_serde_value(source, &opts)
        .map_err(|e| anyhow::anyhow!("it is not valid JSON: {e}"))?
        .unwrap_or(json!({}));
    let Some(root_map) = current.as_object() else {
        bail!("its top level is not an object");
    };
    let servers = root_map.get(key);
    if servers.is_some_and(|s| !s.is_object()) {
        bail!("its `{key}` is not an object");
    }
    let existing = servers.and_then(|s| s.get(SERVER));
    if existing.is_some_and(|e| !e.is_object()) {
        bail!("its `{key}.{SERVER}` is not an object");
    }
    let wanted = entry.as_object().expect("an entry is an object");
    if existing.is_some_and(|e| wanted.iter().all(|(k, v)| e.get(k) == Some(v))) {
        return Ok(None);
    }
    let root = CstRootNode::parse(source, &opts)
        .map_err(|e| anyhow::anyhow!("it is not valid JSON: {e}"))?;
    let servers: CstObject = root.object_value_or_set().object_value_or_set(key);
    match servers.object_value(SERVER) {
        // Only iret's keys are set: what a user added to the entry stays.
        Some(ours) => {
            for (k, v) in wanted {
                match ours.get(k) {
                    Some(prop) => prop.set_value(to_input(v)),
                    None => {
                        ours.append(k, to_input(v));
                    }
                }
            }
        }
        None => {
            servers.append(SERVER, to_input(entry));
        }
    }
    let mut out = root.to_string();
    if !out.ends_with('\n') {
        out.push('\n');
    }
    Ok(Some(out))
}

fn set_codex(doc: &mut toml_edit::DocumentMut, command: &str) {
    let servers = doc
        .entry("mcp_servers")
        .or_insert_with(|| {
            let mut t = toml_edit::Table::new();
            t.set_implicit(true);
            toml_edit::Item::Table(t)
        })
        .as_table_mut()
        .expect("checked to be a table");
    let ours = servers
        .entry(SERVER)
        .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()))
        .as_table_mut()
        .expect("checked to be a table");
    ours["command"] = toml_edit::value(command);
    let mut args = toml_edit::Array::new();
    args.push("mcp");
    ours["args"] = toml_edit::value(args);
}

fn merge_codex(text: Option<&str>, command: &str) -> anyhow::Result<Option<String>> {
    let mut doc: toml_edit::DocumentMut = text
        .unwrap_or("")
        .parse()
        .map_err(|e| anyhow::anyhow!("it is not valid TOML: {e}"))?;
    let servers = doc.get("mcp_servers");
    if servers.is_some_and(|s| !s.is_table()) {
        bail!("its `mcp_servers` is not a table");
    }
    let ours = servers.and_then(|s| s.get(SERVER));
    if ours.is_some_and(|o| !o.is_table()) {
        bail!("its `mcp_servers.{SERVER}` is not a table");
    }
    let same = ours.is_some_and(|o| {
        o.get("command").and_then(|c| c.as_str()) == Some(command)
            && o.get("args")
                .and_then(|a| a.as_array())
                .is_some_and(|a| a.len() == 1 && a.get(0).and_then(|x| x.as_str()) == Some("mcp"))
    });
    if same {
        return Ok(None);
    }
    set_codex(&mut doc, command);
    Ok(Some(doc.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folders(home: &Path) -> Folders {
        Folders {
            home: home.to_path_buf(),
            xdg_config: None,
            appdata: None,
            codex_home: None,
        }
    }

    /// A configuration holding another server (and, where the format allows, a comment
    /// and another setting), as a user would have it.
    fn existing(agent: &Agent) -> String {
        match agent.format {
            Format::Json { key, .. } => format!(
                "{{\n  // the user's own note\n  \"theme\": \"dark\",\n  \"{key}\": {{\n    \
                 \"other\": {{ \"command\": \"other-server\", \"args\": [\"--flag\"] }}\n  }}\n}}\n"
            ),
            Format::CodexToml => "# the user's own note\nmodel = \"o4\"\n\n\
                 [mcp_servers.other]\ncommand = \"other-server\"\nargs = [\"--flag\"]\n"
                .into(),
        }
    }

    #[test]
    fn every_agent_gets_the_entry_others_survive_and_a_second_run_changes_nothing() {
        for agent in AGENTS {
            let home = tempfile::tempdir().unwrap();
            let f = folders(home.path());
            let path = agent.path(&f);
            assert!(path.starts_with(home.path()), "{}", agent.id);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, existing(agent)).unwrap();

            let out = setup(agent, &f, "/opt/iret/bin/iret").unwrap();
            assert_eq!(out, Outcome::Written(path.clone()), "{}", agent.id);
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(text.contains("the user's own note"), "{}: {text}", agent.id);
            match agent.format {
                Format::Json { key, entry } => {
                    let doc = jsonc_parser::parse_to_serde_value(&text, &Default::default())
                        .unwrap()
                        .unwrap();
                    assert_eq!(doc["theme"], "dark", "{}", agent.id);
                    assert_eq!(doc[key]["other"]["command"], "other-server", "{}", agent.id);
                    assert_eq!(
                        doc[key][SERVER],
                        entry("/opt/iret/bin/iret"),
                        "{}",
                        agent.id
                    );
                }
                Format::CodexToml => {
                    let doc: toml_edit::DocumentMut = text.parse().unwrap();
                    assert_eq!(doc["model"].as_str(), Some("o4"));
                    assert_eq!(
                        doc["mcp_servers"]["other"]["command"].as_str(),
                        Some("other-server")
                    );
                    assert_eq!(
                        doc["mcp_servers"][SERVER]["command"].as_str(),
                        Some("/opt/iret/bin/iret")
                    );
                }
            }
            assert_eq!(
                setup(agent, &f, "/opt/iret/bin/iret").unwrap(),
                Outcome::Unchanged(path.clone()),
                "{}",
                agent.id
            );
            assert_eq!(
                std::fs::read_to_string(&path).unwrap(),
                text,
                "{}",
                agent.id
            );
            // Another binary: the entry follows it, the rest stays.
            assert!(matches!(
                setup(agent, &f, "/usr/bin/iret").unwrap(),
                Outcome::Written(_)
            ));
            let again = std::fs::read_to_string(&path).unwrap();
            assert!(again.contains("/usr/bin/iret") && again.contains("other-server"));
        }
    }

    #[test]
    fn a_missing_file_is_created_with_its_folders() {
        for agent in AGENTS {
            let home = tempfile::tempdir().unwrap();
            let f = folders(home.path());
            assert!(matches!(
                setup(agent, &f, "iret").unwrap(),
                Outcome::Written(_)
            ));
            let text = std::fs::read_to_string(agent.path(&f)).unwrap();
            assert!(
                agent.merge(Some(&text), "iret").unwrap().is_none(),
                "{}",
                agent.id
            );
        }
    }

    #[test]
    fn a_file_it_cannot_read_is_left_alone_with_the_entry_to_add_by_hand() {
        let home = tempfile::tempdir().unwrap();
        let f = folders(home.path());
        for (id, bad) in [
            ("cursor", "{ \"mcpServers\": [1, 2] }"),
            ("cursor", "{ not json"),
            ("codex", "mcp_servers = 3\n"),
        ] {
            let agent = agent(id).unwrap();
            let path = agent.path(&f);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, bad).unwrap();
            let err = format!("{:#}", setup(agent, &f, "iret").unwrap_err());
            assert!(
                err.contains("left as it is") && err.contains("iret"),
                "{err}"
            );
            assert_eq!(std::fs::read_to_string(&path).unwrap(), bad);
        }
        assert!(agent("emacs")
            .err()
            .unwrap()
            .to_string()
            .contains("claude-code"));
    }

    #[test]
    fn a_user_key_in_the_entry_stays() {
        let agent = agent("gemini").unwrap();
        let text = "{\"mcpServers\": {\"iret\": {\"command\": \"old\", \"args\": [\"mcp\"], \"timeout\": 5}}}";
        let out = agent.merge(Some(text), "new").unwrap().unwrap();
        let doc: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(doc["mcpServers"]["iret"]["timeout"], 5);
        assert_eq!(doc["mcpServers"]["iret"]["command"], "new");
    }
}
