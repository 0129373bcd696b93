/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

const (
	// GroupName is the API group of the gang scheduler's resources.
	GroupName = "scheduling.sparkop.dev"
	// Version is the API version served by this package.
	Version = "v1alpha1"
)

var (
	// GroupVersion identifies the API group and version of the types in this package.
	GroupVersion = schema.GroupVersion{Group: GroupName, Version: Version}

	// SchemeBuilder collects the functions that register this package's types.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme registers every type of this package with a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
