/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Command external-scheduler is a small external scheduler (shortest job first) for
// spec.batchScheduler: external. Run it, and start the operator with
// --external-scheduler-url=http://<its address>/ (see README.md beside it).
package main

import (
	"flag"
	"log"
	"net/http"
	"time"

	"github.com/sparkop/spark-operator/examples/external-scheduler/sjf"
)

func main() {
	addr := flag.String("listen", ":8090", "address to serve the scheduling requests on")
	cert := flag.String("tls-cert", "", "PEM certificate to serve https with (with -tls-key)")
	key := flag.String("tls-key", "", "PEM key of -tls-cert")
	flag.Parse()
	srv := &http.Server{Addr: *addr, Handler: sjf.Handler(), ReadHeaderTimeout: 5 * time.Second}
	log.Printf("shortest-job-first scheduler listening on %s", *addr)
	var err error
	if *cert != "" {
		err = srv.ListenAndServeTLS(*cert, *key)
	} else {
		err = srv.ListenAndServe()
	}
	log.Fatal(err)
}
