"""`planner dispatch TASK_CLASS --repo PATH`: run the planner graph, durably, with a live view."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from planner.cli.output import emit_json, err_console, error_line, parse_inputs
from planner.config import Settings
from planner.run.apply import apply_run
from planner.store.runs import run_coverage, run_items

NODE_LABEL = {"recipe_match": "recipe", "solved_example_rag": "solved examples", "llm_fallback": "LLM",
              "execute": "subgraph"}


def live(quiet: bool) -> Any:
    def show(kind: str, data: dict[str, Any]) -> None:
        if quiet:
            return
        if kind == "run":
            err_console.print(f"run {data['run_id']}")
        elif kind == "resume":
            err_console.print(f"resuming {data['run_id']} at {', '.join(data['next'])}")
        elif kind == "node" and data["node"] not in NODE_LABEL and not data["namespace"]:
            err_console.print(f"  [green]✓[/green] {data['node']}")
        elif kind == "stage":
            stage = NODE_LABEL.get(data["stage"], data["stage"])
            err_console.print(f"    · {data['item']}: {stage} → {data['outcome']}")
        elif kind == "verify":
            err_console.print(f"    · verifying with `{data['command']}`")
    return show


def report(state: dict[str, Any], as_json: bool) -> None:
    artifacts = state.get("artifacts") or {}
    from repocontext.secrets import redact_tree

    state = redact_tree(state)  # what is shown holds no secret value; the exact patch is artifacts["patch_exact"]
    if as_json:
        emit_json({"run_id": state.get("run_id"), "status": state.get("status"), "error": state.get("error"),
                   "patch": state.get("patch", ""), "patch_path": artifacts.get("patch"),
                   "report_path": artifacts.get("report"), "artifacts": artifacts,
                   "verification": state.get("verification"), "branch": state.get("branch"),
                   "items": run_items(state),
                   "llm_calls": state.get("llm_calls", []), **run_coverage(state)})
        return
    sys.stdout.write(state.get("report", "") + "\n")
    if state.get("patch"):
        sys.stdout.write(state["patch"] + "\n")
    err_console.print(f"status: {state.get('status')}  report: {artifacts.get('report', '-')}  "
                      f"patch: {artifacts.get('patch', '-')}")
    said = run_coverage(state)  # the report says these too; stderr is what a person sees last (one line each)
    if said.get("not_evaluated_reason"):
        sys.stderr.write(f"not evaluated: {said['not_evaluated_reason']}\n")
    if (said.get("advisories") or {}).get("warning"):
        sys.stderr.write(f"warning: {said['advisories']['warning']}\n")
    if artifacts.get("patch_exact"):
        err_console.print(f"secret values are redacted in what is shown; the exact patch: {artifacts['patch_exact']}")
    prompts = sorted(v for k, v in artifacts.items() if k.startswith("prompt:"))
    if state.get("status") == "needs_llm" and prompts:
        err_console.print("the prompt an LLM would have been sent: " + ", ".join(prompts))
        err_console.print(f"go on without a model: planner runs answer {state.get('run_id')} --plan PLAN.yaml, or "
                          f"planner examples add {state.get('task_class')} --repo REPO --patch FIX.diff")
    if state.get("branch"):
        err_console.print(f"committed on branch {state['branch']} (git switch {state['branch']})")
    if str(state.get("error") or "").startswith("--apply refused"):
        error_line(state["error"])


def exit_for(state: dict[str, Any]) -> None:
    from planner.run.dispatch import EXIT

    code = state.get("exit_code") or EXIT.get(state.get("status", "failed"), 5)
    if code:
        raise typer.Exit(int(code))


def dispatch_command(
    task_class: Annotated[str, typer.Argument(help="The task class (see `planner task-classes list`).")],
    repo: Annotated[Path, typer.Option(help="The repository.")] = Path("."),
    inputs: Annotated[list[str] | None, typer.Option("--input", "-i", help="Run input NAME=VALUE.")] = None,
    advisories: Annotated[list[Path] | None, typer.Option(help="OSV advisories: directory, zip or report.")] = None,
    model: Annotated[str | None, typer.Option(help="LangChain chat model provider:name (or PLANNER_MODEL).")] = None,
    no_gather: Annotated[bool, typer.Option("--no-gather", help="Never gather; bootstrap mode if none.")] = False,
    verify: Annotated[bool, typer.Option(
        help="Run the repository's own test command on the patched tree: in a throwaway copy, sandboxed "
             "(bubblewrap: no network, no home, no keys; the copy is the only writable path).")] = False,
    regenerate: Annotated[bool, typer.Option(
        help="Regenerate lockfiles with their own tool (npm, yarn, pnpm, poetry, uv, go, pip-compile): in a "
             "throwaway copy, sandboxed with the package registry's network only (no home, no keys, no "
             "sockets); without it an item whose lockfile must change ends needs_regeneration (exit 7).")]
    = False,
    no_sandbox: Annotated[bool, typer.Option(
        "--no-sandbox", help="Run recipe commands, --verify and --regenerate WITHOUT isolation (where bubblewrap "
                             "cannot run); recorded in the run and its report. Only for repositories you trust.")]
    = False,
    apply: Annotated[bool, typer.Option(help="Commit the patch on a new branch (clean work tree only).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable result.")] = False,
    org: Annotated[str | None, typer.Option(help="distroless-migration: the Chainguard org (input org=).")] = None,
    registry: Annotated[str | None, typer.Option(help="distroless-migration: image registry (input registry=).")]
    = None,
    mapping: Annotated[Path | None, typer.Option(help="distroless-migration: a user mapping YAML (input mapping=).")]
    = None,
) -> None:
    """Run a task class on a repository: bundle → recipe / solved example / LLM → patch and report."""
    # Imported here, not at the top: the graph and LangChain cost ~1 s, which --help and a usage error need not pay.
    from planner.chain.llm import init_model
    from planner.run.apply import check_clean
    from planner.run.dispatch import dispatch, run_options

    settings = Settings.from_env().for_one_run()
    spec = model or settings.model
    chat_model = init_model(spec) if spec else None
    options = run_options(settings, [str(p) for p in advisories or []], no_gather, verify, regenerate, no_sandbox)
    given = parse_inputs(inputs or [])
    shortcuts = {"org": org, "registry": registry, "mapping": str(mapping.resolve()) if mapping else None}
    given.update({k: v for k, v in shortcuts.items() if v and k not in given})
    if apply and repo.is_dir():
        check_clean(repo.resolve())
    state = dispatch(settings, task_class, repo, given, options, chat_model, spec, live(as_json))
    if apply and state.get("status") == "succeeded" and state.get("patch"):
        apply_run(settings, task_class, state)
    report(state, as_json)
    exit_for(state)
