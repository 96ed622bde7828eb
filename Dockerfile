# fleetrules in a container: `docker build -t fleetrules .`, then for example
#   docker run --rm -v "$PWD:/work" -w /work fleetrules eval policies/ --facts facts/
#   kubectl get clusters,resourcebindings,deployments -A -o yaml | docker run --rm -i -v "$PWD:/work" -w /work fleetrules eval policies/ --facts -
# Python 3.12: durable-rules 2.0.28 builds and imports on 3.11 and 3.12 only (pyproject requires-python).
FROM python:3.12-slim AS build
RUN apt-get update && apt-get install -y --no-install-recommends gcc g++ make && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml README.md constraints.txt ./
COPY engine engine
COPY grammar grammar
COPY rules rules
RUN pip wheel --no-cache-dir --wheel-dir /wheels -c constraints.txt .

FROM python:3.12-slim
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels && useradd --create-home fleetrules
USER fleetrules
ENTRYPOINT ["fleetrules"]
CMD ["--help"]
