/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Command spark-scheduler is the upstream kube-scheduler, of the control plane's version, with
// the SparkReservations plugin registered (plugin/): the gang scheduler's
// --gang-enforcement=plugin. Enable the plugin in a profile of its KubeSchedulerConfiguration
// (multiPoint), as hack/local-cluster.sh up --spark-scheduler and the Helm chart do; every flag
// and setting is kube-scheduler's.
//
// It is a module of its own (go.mod beside this file) so that k8s.io/kubernetes stays out of
// the operator's dependency graph.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"github.com/sparkop/spark-operator/cmd/spark-scheduler/plugin"
)

func main() {
	command := app.NewSchedulerCommand(app.WithPlugin(plugin.Name, plugin.New))
	os.Exit(cli.Run(command))
}
