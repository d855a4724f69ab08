"""A DockerfileMigration as markdown: summary, stages, packages, the runtime decision, notes."""

from __future__ import annotations

from subgraphs.distroless_migration.models import DockerfileMigration


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _stages(m: DockerfileMigration) -> list[str]:
    lines = ["| # | stage | line | from | to | -dev | USER root | notes |", "|---|---|---|---|---|---|---|---|"]
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
    for u in m.unmapped:
        lines.append(f"| {u.line} | {u.manager} | `{u.name}` | **unmapped** | {_cell(u.reason)} |")
    return lines


def _runtime(m: DockerfileMigration) -> list[str]:
    r = m.runtime
    verdict = "shell-free" if r.shell_free else "keeps a shell"
    how = " (restructured: -dev builder + shell-free runtime stage)" if r.restructured else ""
    lines = ["", "### Final stage", "", f"`{r.image or 'unchanged'}`: **{verdict}**{how}."]
    if r.blockers:
        lines += ["", "Blockers:", ""]
        lines += [f"- `{b.file}:{b.line}` {b.what}. **Fix:** {b.how}." for b in r.blockers]
    if r.evidence:
        lines += ["", "Shell evidence:", ""] + [f"- `{e.file}:{e.line}` {e.kind}: {e.detail}" for e in r.evidence]
    if r.notes:
        lines += ["", "Notes:", ""] + [f"- {n}" for n in r.notes]
    return lines


def render(m: DockerfileMigration) -> str:
    status = "changed" if m.changed else "unchanged"
    lines = [f"## `{m.path}`: {status}", "", *_stages(m), *_packages(m), *_runtime(m)]
    if m.notes:
        lines += ["", "### Notes", ""] + [f"- {n}" for n in m.notes]
    return "\n".join(lines) + "\n"
