/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

const (
	// GroupName is the API group served by this package.
	GroupName = "sparkoperator.k8s.io"
	// Version is the API version served by this package.
	Version = "v1beta2"
)

var (
	// GroupVersion identifies the API group and version of the types in this package.
	GroupVersion = schema.GroupVersion{Group: GroupName, Version: Version}

	// SchemeGroupVersion is an alias of GroupVersion for code written in the
	// client-go style.
	SchemeGroupVersion = GroupVersion

	// SchemeBuilder collects the functions that register this package's types.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme registers every type of this package with a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// addKnownTypes registers the types of this package, and the meta/v1 types of its group version.
func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion,
		&SparkApplication{}, &SparkApplicationList{},
		&ScheduledSparkApplication{}, &ScheduledSparkApplicationList{},
	)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// Resource turns an unqualified resource name (such as "sparkapplications")
// into a GroupResource of this API group.
func Resource(resource string) schema.GroupResource {
	return GroupVersion.WithResource(resource).GroupResource()
}
