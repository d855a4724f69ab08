"""Language inventory from the file index (no file is opened)."""

from __future__ import annotations

from repocontext.model import LanguageStat
from repocontext.probe import Probe, ProbeContext, ProbeOutput


class LanguagesProbe(Probe):
    name = "languages"
    version = "1"
    inputs = ("**",)
    produces = ("languages",)

    def run(self, ctx: ProbeContext) -> ProbeOutput:
        counts: dict[str, list[int]] = {}  # language → [files, bytes]; plain ints: this loop sees every file
        for record in ctx.files:
            if record.language is None:
                continue
            found = counts.get(record.language)
            if found is None:
                counts[record.language] = [1, record.size]
            else:
                found[0] += 1
                found[1] += record.size
        ordered = sorted(counts.items(), key=lambda kv: (-kv[1][1], kv[0]))
        stats = {name: LanguageStat(files=files, bytes=size).model_dump() for name, (files, size) in ordered}
        return ProbeOutput(values={"languages": stats})
