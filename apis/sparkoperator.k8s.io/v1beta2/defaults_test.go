/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package v1beta2

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// defaultedPod is the driver or executor pod spec the defaults produce when
// nothing was set.
func defaultedPod() SparkPodSpec {
	return SparkPodSpec{Cores: ptrTo(int32(1)), Memory: ptrTo("1g")}
}

// fullyDefaulted is the spec SetSparkApplicationSpecDefaults produces from an
// empty spec.
func fullyDefaulted() SparkApplicationSpec {
	return SparkApplicationSpec{
		Type:          SparkApplicationTypeScala,
		Mode:          DeployModeCluster,
		RestartPolicy: RestartPolicy{Type: RestartPolicyNever},
		Driver:        DriverSpec{SparkPodSpec: defaultedPod()},
		Executor:      ExecutorSpec{SparkPodSpec: defaultedPod(), Instances: ptrTo(int32(1))},
	}
}

func TestSetSparkApplicationSpecDefaults(t *testing.T) {
	tests := []struct {
		name string
		in   SparkApplicationSpec
		want SparkApplicationSpec
	}{
		{
			name: "empty spec gets every default",
			in:   SparkApplicationSpec{},
			want: fullyDefaulted(),
		},
		{
			name: "type, mode and restart policy set by the user are kept",
			in: SparkApplicationSpec{
				Type:          SparkApplicationTypePython,
				Mode:          DeployModeClient,
				RestartPolicy: RestartPolicy{Type: RestartPolicyNever},
			},
			want: func() SparkApplicationSpec {
				s := fullyDefaulted()
				s.Type = SparkApplicationTypePython
				s.Mode = DeployModeClient
				return s
			}(),
		},
		{
			name: "driver and executor resources set by the user are kept",
			in: SparkApplicationSpec{
				Driver: DriverSpec{SparkPodSpec: SparkPodSpec{Cores: ptrTo(int32(2)), Memory: ptrTo("512m")}},
				Executor: ExecutorSpec{
					SparkPodSpec: SparkPodSpec{Cores: ptrTo(int32(4)), Memory: ptrTo("8g")},
					Instances:    ptrTo(int32(10)),
				},
			},
			want: func() SparkApplicationSpec {
				s := fullyDefaulted()
				s.Driver.Cores = ptrTo(int32(2))
				s.Driver.Memory = ptrTo("512m")
				s.Executor.Cores = ptrTo(int32(4))
				s.Executor.Memory = ptrTo("8g")
				s.Executor.Instances = ptrTo(int32(10))
				return s
			}(),
		},
		{
			name: "values given through sparkConf are not shadowed by defaults",
			in: SparkApplicationSpec{
				SparkConf: map[string]string{
					"spark.driver.cores":       "2",
					"spark.driver.memory":      "2g",
					"spark.executor.cores":     "3",
					"spark.executor.memory":    "3g",
					"spark.executor.instances": "4",
				},
			},
			want: SparkApplicationSpec{
				Type:          SparkApplicationTypeScala,
				Mode:          DeployModeCluster,
				RestartPolicy: RestartPolicy{Type: RestartPolicyNever},
				SparkConf: map[string]string{
					"spark.driver.cores":       "2",
					"spark.driver.memory":      "2g",
					"spark.executor.cores":     "3",
					"spark.executor.memory":    "3g",
					"spark.executor.instances": "4",
				},
			},
		},
		{
			name: "OnFailure gets default retry intervals",
			in: SparkApplicationSpec{
				RestartPolicy: RestartPolicy{Type: RestartPolicyOnFailure, OnFailureRetries: ptrTo(int32(3))},
			},
			want: func() SparkApplicationSpec {
				s := fullyDefaulted()
				s.RestartPolicy = RestartPolicy{
					Type:                             RestartPolicyOnFailure,
					OnFailureRetries:                 ptrTo(int32(3)),
					OnFailureRetryInterval:           ptrTo(int64(5)),
					OnSubmissionFailureRetryInterval: ptrTo(int64(5)),
				}
				return s
			}(),
		},
		{
			name: "Always keeps retry intervals set by the user",
			in: SparkApplicationSpec{
				RestartPolicy: RestartPolicy{
					Type:                             RestartPolicyAlways,
					OnFailureRetryInterval:           ptrTo(int64(30)),
					OnSubmissionFailureRetryInterval: ptrTo(int64(60)),
				},
			},
			want: func() SparkApplicationSpec {
				s := fullyDefaulted()
				s.RestartPolicy = RestartPolicy{
					Type:                             RestartPolicyAlways,
					OnFailureRetryInterval:           ptrTo(int64(30)),
					OnSubmissionFailureRetryInterval: ptrTo(int64(60)),
				}
				return s
			}(),
		},
		{
			name: "Never gets no retry intervals",
			in:   SparkApplicationSpec{RestartPolicy: RestartPolicy{Type: RestartPolicyNever}},
			want: fullyDefaulted(),
		},
		{
			name: "dynamic allocation leaves instances unset and keeps its own settings",
			in: SparkApplicationSpec{
				DynamicAllocation: &DynamicAllocation{
					Enabled:          true,
					InitialExecutors: ptrTo(int32(2)),
					MinExecutors:     ptrTo(int32(1)),
					MaxExecutors:     ptrTo(int32(5)),
				},
			},
			want: func() SparkApplicationSpec {
				s := fullyDefaulted()
				s.Executor.Instances = nil
				s.DynamicAllocation = &DynamicAllocation{
					Enabled:                true,
					InitialExecutors:       ptrTo(int32(2)),
					MinExecutors:           ptrTo(int32(1)),
					MaxExecutors:           ptrTo(int32(5)),
					ShuffleTrackingEnabled: ptrTo(true),
				}
				return s
			}(),
		},
		{
			name: "dynamic allocation keeps instances and shuffle tracking set by the user",
			in: SparkApplicationSpec{
				Executor:          ExecutorSpec{Instances: ptrTo(int32(3))},
				DynamicAllocation: &DynamicAllocation{Enabled: true, ShuffleTrackingEnabled: ptrTo(false)},
			},
			want: func() SparkApplicationSpec {
				s := fullyDefaulted()
				s.Executor.Instances = ptrTo(int32(3))
				s.DynamicAllocation = &DynamicAllocation{Enabled: true, ShuffleTrackingEnabled: ptrTo(false)}
				return s
			}(),
		},
		{
			name: "disabled dynamic allocation behaves like none",
			in: SparkApplicationSpec{
				DynamicAllocation: &DynamicAllocation{Enabled: false},
			},
			want: func() SparkApplicationSpec {
				s := fullyDefaulted()
				s.DynamicAllocation = &DynamicAllocation{Enabled: false}
				return s
			}(),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := *tc.in.DeepCopy()
			SetSparkApplicationSpecDefaults(&got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("defaults mismatch (-want +got):\n%s", diff)
			}
			// Applying the defaults again must change nothing.
			again := *got.DeepCopy()
			SetSparkApplicationSpecDefaults(&again)
			if diff := cmp.Diff(got, again); diff != "" {
				t.Errorf("defaults are not idempotent (-first +second):\n%s", diff)
			}
		})
	}
}

func TestSetSparkApplicationDefaults(t *testing.T) {
	app := &SparkApplication{
		ObjectMeta: metav1.ObjectMeta{Name: "pi", Namespace: "default"},
		Spec:       SparkApplicationSpec{MainApplicationFile: "local:///opt/app.jar", SparkVersion: "3.5.3"},
	}
	SetSparkApplicationDefaults(app)

	want := fullyDefaulted()
	want.MainApplicationFile = "local:///opt/app.jar"
	want.SparkVersion = "3.5.3"
	if diff := cmp.Diff(want, app.Spec); diff != "" {
		t.Errorf("defaults mismatch (-want +got):\n%s", diff)
	}
	if app.Name != "pi" || app.Namespace != "default" {
		t.Errorf("metadata changed: %+v", app.ObjectMeta)
	}

	// Nil inputs must not panic.
	SetSparkApplicationDefaults(nil)
	SetSparkApplicationSpecDefaults(nil)
	SetScheduledSparkApplicationDefaults(nil)
}

func TestSetScheduledSparkApplicationDefaults(t *testing.T) {
	tests := []struct {
		name string
		in   ScheduledSparkApplicationSpec
		want ScheduledSparkApplicationSpec
	}{
		{
			name: "empty spec gets schedule and template defaults",
			in:   ScheduledSparkApplicationSpec{Schedule: "@every 3m"},
			want: ScheduledSparkApplicationSpec{
				Schedule:                  "@every 3m",
				ConcurrencyPolicy:         ConcurrencyAllow,
				SuccessfulRunHistoryLimit: ptrTo(int32(1)),
				FailedRunHistoryLimit:     ptrTo(int32(1)),
				Template:                  fullyDefaulted(),
			},
		},
		{
			name: "values set by the user are kept",
			in: ScheduledSparkApplicationSpec{
				Schedule:                  "0 * * * *",
				ConcurrencyPolicy:         ConcurrencyForbid,
				SuccessfulRunHistoryLimit: ptrTo(int32(0)),
				FailedRunHistoryLimit:     ptrTo(int32(5)),
				Template:                  SparkApplicationSpec{Type: SparkApplicationTypeR},
			},
			want: ScheduledSparkApplicationSpec{
				Schedule:                  "0 * * * *",
				ConcurrencyPolicy:         ConcurrencyForbid,
				SuccessfulRunHistoryLimit: ptrTo(int32(0)),
				FailedRunHistoryLimit:     ptrTo(int32(5)),
				Template: func() SparkApplicationSpec {
					s := fullyDefaulted()
					s.Type = SparkApplicationTypeR
					return s
				}(),
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			app := &ScheduledSparkApplication{Spec: *tc.in.DeepCopy()}
			SetScheduledSparkApplicationDefaults(app)
			if diff := cmp.Diff(tc.want, app.Spec); diff != "" {
				t.Errorf("defaults mismatch (-want +got):\n%s", diff)
			}
			again := app.DeepCopy()
			SetScheduledSparkApplicationDefaults(again)
			if diff := cmp.Diff(app.Spec, again.Spec); diff != "" {
				t.Errorf("defaults are not idempotent (-first +second):\n%s", diff)
			}
		})
	}
}
