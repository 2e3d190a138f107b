# lws-sim in a container, for fuzz campaigns spread over a cluster (deploy/fuzz-job.yaml).
# Build: docker build -t lws-sim .   Run: docker run --rm lws-sim fuzz --reconciler all-fixed --time 60s
FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
# `dist` (the release build with whole-program optimisation, Cargo.toml), trained and built
# again with profile-guided optimisation: about 1.5x the fuzz cases per second of `release`
# (README, "Performance"). Two cold builds, about 20 minutes on 2 cores.
RUN rustup component add llvm-tools && scripts/pgo-build.sh /src/lws-sim

FROM debian:bookworm-slim
COPY --from=build /src/lws-sim /usr/local/bin/lws-sim
COPY --from=build /src/scenarios /scenarios
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/lws-sim"]
