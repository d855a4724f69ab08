# The planner as a container: `docker compose run --rm planner dispatch vulnerability-remediation --repo /repos/NAME`
FROM python:3.11-slim
RUN apt-get update && apt-get install -y --no-install-recommends git && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/tccm-planner
COPY pyproject.toml README.md ./
COPY planner ./planner
COPY repocontext ./repocontext
COPY subgraphs ./subgraphs
COPY task-class-contexts ./task-class-contexts
RUN pip install --no-cache-dir -e .
ENV PLANNER_HOME=/var/lib/planner
WORKDIR /repos
ENTRYPOINT ["planner"]
CMD ["--help"]
