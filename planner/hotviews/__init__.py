"""Hot views: pre-rendered bundle slices (and assembled bundles) in Redis, per repository and commit.

Modules: slices (which slices, computed from the TCCMs in service), backend
(Redis URL → client, or the embedded default), naming (keys, versions,
snapshot fingerprints), store (read, write, warm, invalidate), bundles (the
builder's hot-view path), stats. Import the submodules directly. The slice
types the bundle builder reads (HotSlice, SliceSource) are `planner.bundle.hotslice`,
below this package, so the builder never imports hot views.
"""
