"""A DockerfileMigration as markdown: the path as heading and a one-line summary (so a run over many
Dockerfiles reads at a glance), then blockers, stages, packages, the final-stage decision and notes.

Wording follows the item's status: an unconverted package or command is a **blocker** of a blocked item,
and "kept as written (TODO)" when the user set keep_unconverted (never "unmapped" next to a success)."""

from __future__ import annotations

from subgraphs.distroless_migration.models import DockerfileMigration


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _images(m: DockerfileMigration) -> list[dict[str, object]]:
    return [{"line": s.line, "from": s.old_image, "to": s.new_image, "added": s.added} for s in m.stages
            if s.added or (s.old_image is not None and s.old_image != s.new_image)]


def _final(m: DockerfileMigration) -> str:
    r = m.runtime
    if r.image is None:
        return "final stage not migrated" if not r.shell_free else "final stage unchanged (no shell already)"
    if r.shell_free:
        return "final stage shell-free" + (" (restructured)" if r.restructured else "")
    reasons = len(r.blockers)
    return f"final stage kept -dev ({reasons} reason{'s' * (reasons != 1)})" if reasons else "final stage keeps a shell"


def summary(m: DockerfileMigration) -> dict[str, object]:
    """The facts a reviewer (or the JSON) needs first, and the same as one line of text."""
    images = _images(m)
    shown = ", ".join(f"`{i['from']}` → `{i['to']}`" if not i["added"] else f"+ runtime `{i['to']}`" for i in images)
    blockers, kept = len(m.blockers), m.keep_unconverted and bool(m.blockers)
    what = f"{blockers} unconverted, kept as TODO" if kept else f"{blockers} blocker{'s' * (blockers != 1)}"
    unmapped = f"{len(m.unmapped)} kept as written" if kept else f"{len(m.unmapped)} unmapped"
    parts = [shown or "no image changes", f"packages {len(m.packages)} mapped, {unmapped}", _final(m), what]
    if m.checks:
        parts.append(f"{len(m.checks)} build check{'s' * (len(m.checks) != 1)} failed")
    line = "; ".join(parts)
    return {"path": m.path, "images": images, "packages_mapped": len(m.packages), "packages_unmapped": len(m.unmapped),
            "final_image": m.runtime.image, "shell_free": m.runtime.shell_free, "restructured": m.runtime.restructured,
            "kept_dev_reasons": len(m.runtime.blockers), "blockers": blockers, "checks_failed": len(m.checks),
            "line": line}


def _status(m: DockerfileMigration, status: str | None) -> str:
    if status is not None:
        return status
    return "blocked" if m.blocked else "changed" if m.changed else "unchanged"


def _blockers(m: DockerfileMigration) -> list[str]:
    if not m.blockers:
        return []
    title = ("Kept unconverted (keep_unconverted=true: each is kept as written under a `# TODO(planner):` comment)"
             if m.keep_unconverted else "Blockers (each kept as written under a `# TODO(planner):` comment; this "
             "Dockerfile's edits stay out of the patch until they are resolved or keep_unconverted=true is given)")
    lines = ["", f"### {title}", ""]
    lines += [f"- `{b.file}:{b.line}` [{b.kind}] {b.message}. **Fix:** {b.fix}." for b in m.blockers]
    return lines


def _checks(m: DockerfileMigration) -> list[str]:
    if not m.checks:
        return []
    lines = ["", "### Build checks failed (the written file would not build: the item is blocked)", ""]
    return lines + [f"- `{b.file}:{b.line}` {b.message}. **Fix:** {b.fix}." for b in m.checks]


def _stages(m: DockerfileMigration) -> list[str]:
    lines = ["", "| # | stage | line | from | to | -dev | USER root | notes |", "|---|---|---|---|---|---|---|---|"]
    for s in m.stages:
        old = f"`{_cell(s.old_image)}`" if s.old_image is not None else "(added)"
        lines.append(f"| {s.index} | {s.name or ''} | {s.line} | {old} | `{_cell(s.new_image)}` | "
                     f"{'yes' if s.dev_variant else ''} | {'added' if s.user_root_added else ''} | {_cell(s.note)} |")
    return lines


def _packages(m: DockerfileMigration) -> list[str]:
    if not m.packages and not m.unmapped:
        return []
    lines = ["", "### Packages", "", "| line | manager | package | Wolfi | note |", "|---|---|---|---|---|"]
    for p in m.packages:
        new = ", ".join(f"`{n}`" for n in p.new) or "—"
        lines.append(f"| {p.line} | {p.manager} | `{p.old}` | {new} | {_cell(p.note)} |")
    label = "kept as written (TODO)" if m.keep_unconverted else "**unmapped: blocker**"
    for u in m.unmapped:
        lines.append(f"| {u.line} | {u.manager} | `{_cell(u.name)}` | {label} | {_cell(u.reason)} |")
    return lines


def _runtime(m: DockerfileMigration) -> list[str]:
    r = m.runtime
    verdict = "shell-free" if r.shell_free else "keeps a shell"
    how = " (restructured: -dev builder + shell-free runtime stage)" if r.restructured else ""
    lines = ["", "### Final stage", "", f"`{r.image or 'unchanged'}`: **{verdict}**{how}."]
    if r.blockers:
        lines += ["", "Why it keeps a shell (-dev):", ""]
        lines += [f"- `{b.file}:{b.line}` {b.what}. **Fix:** {b.how}." for b in r.blockers]
    if r.evidence:
        lines += ["", "Shell evidence:", ""] + [f"- `{e.file}:{e.line}` {e.kind}: {e.detail}" for e in r.evidence]
    if r.notes:
        lines += ["", "Notes:", ""] + [f"- {n}" for n in r.notes]
    return lines


def render(m: DockerfileMigration, status: str | None = None) -> str:
    head = [f"## `{m.path}`", "", f"**{_status(m, status)}** · {summary(m)['line']}"]
    lines = [*head, *_checks(m), *_blockers(m), *_stages(m), *_packages(m), *_runtime(m)]
    if m.notes:
        lines += ["", "### Notes", ""] + [f"- {n}" for n in m.notes]
    return "\n".join(lines) + "\n"
