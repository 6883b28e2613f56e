# The runner itself: drift-conformance with the committed corpus and the built-in adapters.
#   docker build -t drift-conformance . && docker run --rm drift-conformance --adapter keyword --split ci
# Where a build cannot reach a package index, build the wheels on the host first:
#   pip wheel -w wheelhouse hatchling . && docker build --build-arg PIP_NO_INDEX=1 -t drift-conformance .
FROM python:3.11-slim
ARG PIP_NO_INDEX=0
COPY . /src
RUN pip install --no-cache-dir --disable-pip-version-check --find-links /src/wheelhouse /src \
    && rm -rf /src
WORKDIR /work
ENTRYPOINT ["drift-conformance"]
CMD ["--help"]
