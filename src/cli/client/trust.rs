//! `orchestra trust PATH | --list | --revoke PATH`: trust a repository's `.orchestra.toml`
//! (its current content), list what is trusted, take a trust back.

use super::error::{CliError, CliResult};
use super::http::{PrintJson, Reply};
use super::output::{Table, ago, clean, out, short_id};
use super::{Ctx, TrustArgs};
use orchestra_proto::wire::request::TrustPath;
use orchestra_proto::wire::{RepoAskKind, Revoked, TrustList, Trusted};
use std::path::Path;

use orchestra_proto::routes::{self, TRUST};

pub fn run(ctx: &Ctx, args: &TrustArgs) -> CliResult<()> {
    if args.list {
        return list(ctx);
    }
    if let Some(path) = &args.revoke {
        return revoke(ctx, path);
    }
    match &args.path {
        Some(path) => trust(ctx, path),
        None => Err(CliError::usage(
            "name the file to trust (a repository's .orchestra.toml, or its directory), or pass --list or --revoke PATH",
        )),
    }
}

/// The path as the server needs it: absolute (it does not share this working directory).
fn absolute(path: &Path) -> CliResult<String> {
    let abs = path
        .canonicalize()
        .or_else(|_| std::path::absolute(path))
        .map_err(|e| CliError::usage(format!("cannot use {}: {e}", path.display())))?;
    abs.to_str()
        .map(str::to_string)
        .ok_or_else(|| CliError::usage(format!("{} is not valid UTF-8", abs.display())))
}

fn trust(ctx: &Ctx, path: &Path) -> CliResult<()> {
    let body = TrustPath {
        path: absolute(path)?,
    };
    let answer: Reply<Trusted> =
        ctx.client
            .post(TRUST, &body, "what was trusted (`{trusted, asks, tasks}`)")?;
    if ctx.json {
        answer.print_json();
        return Ok(());
    }
    let t = &answer.value;
    let mut text = format!(
        "trusted {} (sha256 {})",
        clean(&t.trusted.file),
        short_id(&t.trusted.sha256)
    );
    if t.asks.is_empty() {
        text.push_str(": it asks for nothing to run or copy (it needed no trust)");
    } else {
        text.push_str(": from now on orchestra may, with your rights,");
        for ask in &t.asks {
            let what = match ask.kind {
                RepoAskKind::Setup => "run (set-up)",
                RepoAskKind::Copy => "copy",
                RepoAskKind::Check => "run (check)",
            };
            let mut lines = ask.value.lines();
            text.push_str(&format!(
                "\n  {what}: {}",
                clean(lines.next().unwrap_or_default())
            ));
            for more in lines {
                text.push_str(&format!("\n    {}", clean(more)));
            }
        }
        text.push_str("\nany change to the file asks again");
    }
    match t.tasks.len() {
        0 => {}
        n => {
            let ids: Vec<String> = t.tasks.iter().map(|id| short_id(id)).collect();
            let tasks = if n == 1 { "task" } else { "tasks" };
            text.push_str(&format!(
                "\n{n} waiting {tasks} proceed: {}",
                ids.join(", ")
            ));
        }
    }
    out(&text);
    Ok(())
}

fn list(ctx: &Ctx) -> CliResult<()> {
    let answer: Reply<TrustList> = ctx.client.get(TRUST, "the trusted files (`{trusted}`)")?;
    if ctx.json {
        answer.print_json();
        return Ok(());
    }
    let files = &answer.value.trusted;
    if files.is_empty() {
        out("no repository file is trusted; `orchestra trust PATH` trusts one");
        return Ok(());
    }
    let mut table = Table::new(&["FILE", "SHA256", "TRUSTED"]);
    for f in files {
        table.row(vec![clean(&f.file), short_id(&f.sha256), ago(f.trusted_at)]);
    }
    out(&table.render());
    Ok(())
}

fn revoke(ctx: &Ctx, path: &Path) -> CliResult<()> {
    let body = TrustPath {
        path: absolute(path)?,
    };
    let answer: Reply<Revoked> = ctx.client.post(
        routes::TRUST_REVOKE,
        &body,
        "the trust taken back (`{revoked}`)",
    )?;
    if ctx.json {
        answer.print_json();
        return Ok(());
    }
    out(&format!(
        "no longer trusted: {}; the next task there asks again",
        clean(&answer.value.revoked.file)
    ));
    Ok(())
}
