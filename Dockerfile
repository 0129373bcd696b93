# The operator image the Helm chart runs (the operator, sparkctl and spark-scheduler): static
# binaries on an empty base, as a non-root user.
# The native submitter needs nothing else; the spark-submit mode needs Spark and a JVM, so for
# it build FROM an Apache Spark image instead of scratch and set SPARK_HOME.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/spark-operator ./cmd/spark-operator && \
    CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/sparkctl ./cmd/sparkctl
# spark-scheduler (sparkScheduler.enable in the chart): kube-scheduler with the SparkReservations
# plugin, a module of its own pinned to the control plane's Kubernetes version.
RUN cd cmd/spark-scheduler && v=$(go list -m -f '{{.Version}}' k8s.io/kubernetes) && \
    CGO_ENABLED=0 go build -trimpath -ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$v" -o /out/spark-scheduler .

FROM scratch
COPY --from=build /out/ /usr/local/bin/
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/spark-operator"]
