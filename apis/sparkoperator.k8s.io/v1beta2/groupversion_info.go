/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package v1beta2

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
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
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme registers every type of this package with a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Resource turns an unqualified resource name (such as "sparkapplications")
// into a GroupResource of this API group.
func Resource(resource string) schema.GroupResource {
	return GroupVersion.WithResource(resource).GroupResource()
}
