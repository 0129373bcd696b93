# The operator image the Helm chart runs: static binaries on an empty base, as a non-root user.
# The native submitter needs nothing else; the spark-submit mode needs Spark and a JVM, so for
# it build FROM an Apache Spark image instead of scratch and set SPARK_HOME.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/spark-operator ./cmd/spark-operator && \
    CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/sparkctl ./cmd/sparkctl

FROM scratch
COPY --from=build /out/ /usr/local/bin/
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/spark-operator"]
