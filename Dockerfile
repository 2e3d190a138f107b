# lws-sim in a container, for fuzz campaigns spread over a cluster (deploy/fuzz-job.yaml).
# Build: docker build -t lws-sim .   Run: docker run --rm lws-sim fuzz --reconciler all-fixed --time 60s
FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
# `dist`: the release build with whole-program optimisation (Cargo.toml), ~20% faster fuzzing.
RUN cargo build --profile dist --locked -p lws-sim

FROM debian:bookworm-slim
COPY --from=build /src/target/dist/lws-sim /usr/local/bin/lws-sim
COPY --from=build /src/scenarios /scenarios
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/lws-sim"]
