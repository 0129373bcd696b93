/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package v1beta2

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// A manifest in the shape users write, exercising the inlined pod spec, the
// schemaless pod template and a few nested types.
const sampleManifest = `
apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: spark-pi
  namespace: default
spec:
  type: Scala
  mode: cluster
  sparkVersion: 3.5.3
  mainApplicationFile: local:///opt/spark/examples/jars/spark-examples.jar
  restartPolicy:
    type: OnFailure
    onFailureRetries: 3
  driver:
    cores: 1
    coreLimit: 1200m
    memory: 512m
    serviceAccount: spark
    secrets:
    - name: gcp
      path: /mnt/secrets
      secretType: GCPServiceAccount
    template:
      metadata:
        labels:
          team: data
      spec:
        containers:
        - name: spark-kubernetes-driver
          env:
          - name: KEY
            value: VALUE
  executor:
    instances: 2
    memory: 1g
    deleteOnTermination: false
  batchSchedulerOptions:
    resources:
      cpu: "2"
status:
  applicationState:
    state: RUNNING
  executorState:
    spark-pi-exec-1: RUNNING
`

func TestManifestDecoding(t *testing.T) {
	var app SparkApplication
	if err := yaml.UnmarshalStrict([]byte(sampleManifest), &app); err != nil {
		t.Fatalf("decoding: %v", err)
	}
	if app.Spec.Type != SparkApplicationTypeScala || app.Spec.Mode != DeployModeCluster {
		t.Errorf("type/mode = %q/%q", app.Spec.Type, app.Spec.Mode)
	}
	if got := *app.Spec.Driver.CoreLimit; got != "1200m" {
		t.Errorf("driver.coreLimit = %q", got)
	}
	if got := app.Spec.Driver.Secrets[0].Type; got != SecretTypeGCPServiceAccount {
		t.Errorf("driver.secrets[0].secretType = %q", got)
	}
	tpl := app.Spec.Driver.Template
	if tpl == nil || tpl.Labels["team"] != "data" || tpl.Spec.Containers[0].Env[0].Value != "VALUE" {
		t.Errorf("driver.template not decoded: %+v", tpl)
	}
	if got := *app.Spec.Executor.Instances; got != 2 {
		t.Errorf("executor.instances = %d", got)
	}
	if got := app.Spec.BatchSchedulerOptions.Resources.Cpu().String(); got != "2" {
		t.Errorf("batchSchedulerOptions.resources.cpu = %q", got)
	}
	if got := app.Status.ExecutorState["spark-pi-exec-1"]; got != ExecutorStateRunning {
		t.Errorf("executorState = %q", got)
	}

	// A JSON round trip keeps everything, including the zero status times.
	data, err := json.Marshal(&app)
	if err != nil {
		t.Fatalf("encoding: %v", err)
	}
	var back SparkApplication
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatalf("decoding again: %v", err)
	}
	if diff := cmp.Diff(app, back); diff != "" {
		t.Errorf("round trip changed the object (-before +after):\n%s", diff)
	}

	// DeepCopy gives an equal but independent object.
	cp := app.DeepCopy()
	if diff := cmp.Diff(&app, cp); diff != "" {
		t.Errorf("DeepCopy differs (-orig +copy):\n%s", diff)
	}
	cp.Spec.Driver.Template.Labels["team"] = "changed"
	if app.Spec.Driver.Template.Labels["team"] != "data" {
		t.Error("DeepCopy shares the pod template's labels map")
	}
}
