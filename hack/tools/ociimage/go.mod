// Module ociimage is the tool that packs the real node's images (hack/tools/ociimage/main.go):
// layers as plain tars, the configuration from flags, written as a docker-archive tarball.
module github.com/sparkop/spark-operator/hack/tools/ociimage

go 1.26.0

require github.com/google/go-containerregistry v0.22.1

require (
	github.com/klauspost/compress v1.19.2 // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/opencontainers/image-spec v1.1.1 // indirect
)
