# The ttld image: the static binary alone, nothing to pull. Build it with `make image`,
# which compiles bin/linux/ttld (GOOS=linux, the Docker engine's GOARCH, CGO off,
# stripped) and passes it as TTLD_BINARY; .dockerignore keeps the build context down
# to that one file.
#
# NB: a plain `docker build .` has no binary to copy, and a FROM scratch build cannot
# run a shell to say so. TTLD_BINARY's default is therefore not a file but the
# instruction itself, so that the COPY fails with "stat (no binary: run make image
# ...): file does not exist" rather than with a missing path to puzzle over.
#
# The node's home is not in the image: mount a writable directory at /home/.ttld (the
# default --home, as HOME is /home), one per node, as docker-compose.yml does. The
# container runs as whatever user `docker run --user` / compose's `user:` gives (the
# devnet: a non-root user), so the files it writes into the mounted home belong to
# that user on the host.
FROM scratch
ARG TTLD_BINARY="(no binary: run make image, which builds bin/linux/ttld first and passes it as TTLD_BINARY)"
ARG VERSION=unknown
ARG COMMIT=unknown
LABEL org.opencontainers.image.title="ttld" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${COMMIT}"
COPY ["${TTLD_BINARY}", "/bin/ttld"]
ENV HOME=/home
# 26656 P2P, 26657 RPC, 26660 Prometheus (addresses set in the home's config.toml).
EXPOSE 26656 26657 26660
ENTRYPOINT ["/bin/ttld"]
CMD ["start"]
