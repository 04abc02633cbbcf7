# One image for all three Mirrortree services; pick one with the command:
#   python -m tree_service | python -m graph_service | python -m gateway
# See docker-compose.yml for a complete stack (primary, streaming replica, services).
FROM python:3.11-slim

ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore

# Dependencies first, resolved from pyproject.toml alone, so that editing the
# sources does not reinstall them (this layer changes only with pyproject.toml).
WORKDIR /build
COPY pyproject.toml ./
# The otlp extra too, so that MIRRORTREE_OTEL_EXPORTER=otlp works in the image.
RUN python -c "import tomllib; p = tomllib.load(open('pyproject.toml', 'rb'))['project']; print('\n'.join(p['dependencies'] + p['optional-dependencies']['otlp']))" \
        > /tmp/requirements.txt \
    && pip install --no-cache-dir -r /tmp/requirements.txt \
    && rm /tmp/requirements.txt

# The project itself (generated gRPC code is committed; no codegen needed).
COPY README.md ./
COPY mirrortree ./mirrortree
COPY tree_service ./tree_service
COPY graph_service ./graph_service
COPY gateway ./gateway
COPY webview ./webview
RUN pip install --no-cache-dir . \
    && rm -rf /build

RUN groupadd --system --gid 10001 mirrortree \
    && useradd --system --uid 10001 --gid mirrortree --home-dir /home/mirrortree \
        --create-home --shell /usr/sbin/nologin mirrortree
WORKDIR /home/mirrortree
USER 10001:10001

# Inside a container the loopback defaults are useless: listen on all interfaces.
ENV MIRRORTREE_TREE_LISTEN=0.0.0.0:50051 \
    MIRRORTREE_GRAPH_LISTEN=0.0.0.0:50052 \
    MIRRORTREE_GATEWAY_LISTEN=0.0.0.0:8765

# tree_service gRPC, graph_service gRPC, gateway MCP (HTTP), metrics.
EXPOSE 50051 50052 8765 8766 9101 9102 9103 9104

CMD ["python", "-m", "gateway"]
