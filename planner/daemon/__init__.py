"""A warm planner process the CLI hands its commands to, so a command skips Python's imports.

`planner daemon start` leaves a server running that has imported everything the commands use (typer, rich,
pydantic, the probes, langgraph). `planner ARGS` then connects to it over a Unix socket owned by the user,
passes its argv, environment, working directory and its stdin/stdout/stderr file descriptors, and the
server forks a child that runs the command exactly as a fresh process would (same streams, same terminal,
same environment, nothing cached from an earlier command: the server itself never runs one), while the
client forwards signals and exits with the child's status, the child under the client's rlimits where they
are lower. No daemon, an old one (the source, the installed packages or a file it read while importing, such
as the secret rules, changed since it started), a client confined otherwise (namespaces, credentials,
capabilities, seccomp), a socket that is not surely the user's own, or PLANNER_DAEMON=off: the command runs
in-process as always.

The client side (`client`, and below it planner/cli/daemon_address.py and daemon_link.py, which `planner
daemon` uses too) imports only the standard library: it is what every command pays.
"""
