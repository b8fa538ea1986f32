use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The agent to set up (`--list` names them): claude-code, codex, gemini, cursor,
    /// vscode, zed, windsurf, opencode, cline.
    #[arg(required_unless_present = "list")]
    pub agent: Option<String>,
    /// Show the entry and the file it goes in, without writing anything.
    #[arg(long)]
    pub print: bool,
    /// The agents iret sets up, with the file each one reads on this machine.
    #[arg(long, conflicts_with_all = ["agent", "print"])]
    pub list: bool,
    /// The command the agent starts (default: this iret binary, by its full path: agents
    /// often start servers without your shell's PATH).
    #[arg(long, value_name = "PATH")]
    pub command: Option<String>,
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let folders = iret_setup::Folders::from_env()?;
    if args.list {
        for a in iret_setup::AGENTS {
            let path = a.path(&folders);
            let state = if path.is_file() { "exists" } else { "new" };
            println!("{:<12} {:<26} {} ({state})", a.id, a.name, path.display());
        }
        return Ok(ExitCode::SUCCESS);
    }
    let agent = iret_setup::agent(args.agent.as_deref().unwrap_or_default())?;
    let command = match &args.command {
        Some(c) => c.clone(),
        None => std::env::current_exe()
            .and_then(std::fs::canonicalize)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| "iret".into()),
    };
    if args.print {
        println!("# {} reads {}", agent.name, agent.path(&folders).display());
        print!("{}", agent.snippet(&command));
        println!();
        return Ok(ExitCode::SUCCESS);
    }
    match iret_setup::setup(agent, &folders, &command)? {
        iret_setup::Outcome::Written(path) => eprintln!(
            "iret: {} starts `{command} mcp` now ({}); restart it to load the server",
            agent.name,
            path.display()
        ),
        iret_setup::Outcome::Unchanged(path) => eprintln!(
            "iret: {} already starts `{command} mcp` ({}): nothing changed",
            agent.name,
            path.display()
        ),
    }
    Ok(ExitCode::SUCCESS)
}
