/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import "encoding/json"

// encode is r as a release before the Reservation API stored it (AnnotationAdmission): the
// unit tests give workloads their reservation that way, which the world reads as it would
// one to migrate.
func (r Reservation) encode() string {
	data, _ := json.Marshal(r)
	return string(data)
}
