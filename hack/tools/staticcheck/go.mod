// Module staticcheck pins staticcheck (honnef.co/go/tools), which `make lint` builds into
// .cache/bin once (hack/lint.sh) and runs on the main module and on cmd/spark-scheduler.
// v0.8.2 (staticcheck 2026.2.2) is the newest the module proxy serves; it requires and
// understands Go 1.26.
module github.com/sparkop/spark-operator/hack/tools/staticcheck

go 1.26.0

tool honnef.co/go/tools/cmd/staticcheck

require (
	github.com/BurntSushi/toml v1.4.1-0.20240526193622-a339e1f7089c // indirect
	golang.org/x/exp/typeparams v0.0.0-20231108232855-2478ac86f678 // indirect
	golang.org/x/mod v0.41.0 // indirect
	golang.org/x/sync v0.23.0 // indirect
	golang.org/x/tools v0.51.0 // indirect
	honnef.co/go/tools v0.8.2 // indirect
)
