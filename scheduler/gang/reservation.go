/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/scheduler/gang/core"
	"github.com/sparkop/spark-operator/scheduler/reservation"
	"github.com/sparkop/spark-operator/sparkpod"
)

// AnnotationAdmission is where releases before the Reservation API kept a workload's
// reservation: JSON on the SparkApplication or SparkConnect itself. It is read once: a cycle
// that finds it writes the Reservation object it describes and removes it (reservations.go, migrate).
const AnnotationAdmission = "scheduling.sparkop.dev/admission"

// LabelQueue is set on the pods of an admitted application: the queue it was admitted from.
const LabelQueue = reservation.LabelQueue

// Reservation is an admission as the runtime reads it from its Reservation object
// (schedv1alpha1.Reservation, named by ReservationName): the plan, by node.
type Reservation struct {
	// SubmissionID is the run the admission is for: an application's status.submissionID, a
	// session's status.server.submissionID. A rerun, or a session's next server, records a new
	// one and so needs a new admission.
	SubmissionID string `json:"submissionID"`
	Queue        string `json:"queue"`
	// Driver is the node planned for the driver; Executors the executors planned per node.
	Driver    string           `json:"driver"`
	Executors map[string]int32 `json:"executors,omitempty"`
	// Admitted is when the admission was made; node reservations of members still unbound
	// after the reservation timeout stop counting.
	Admitted time.Time `json:"admitted"`
	// PriorityClassName is the workload's, which its placeholders take.
	PriorityClassName string `json:"-"`
	// DriverRequests and ExecutorRequests are what one pod of each role requests.
	DriverRequests, ExecutorRequests corev1.ResourceList `json:"-"`
	// UID is the stored object's, which owns the reservation's placeholders ("" while it is
	// not stored, or read from a legacy annotation).
	UID types.UID `json:"-"`
	// Status is the stored object's status as last read.
	Status schedv1alpha1.ReservationStatus `json:"-"`
	// Enforcement is the stored object's; Held whether the pod scheduler says it holds the
	// room of its current plan (reservation.Held), TakenOn the node it says room was taken on
	// before it held it (reservation.TakenOn).
	Enforcement Enforcement `json:"-"`
	Held        bool        `json:"-"`
	TakenOn     string      `json:"-"`
}

func newReservation(o *object, a core.Admission, d sparkpod.Demand, now time.Time) Reservation {
	return Reservation{SubmissionID: o.Run, Queue: a.Queue, Driver: a.Driver, PriorityClassName: o.PriorityClassName,
		Executors: maps.Clone(a.Executors), Admitted: now.UTC().Truncate(time.Second),
		DriverRequests: d.Driver.Requests.DeepCopy(), ExecutorRequests: d.Executor.Requests.DeepCopy()}
}

// Admission is the reservation as the decision core sees it.
func (r Reservation) Admission() *core.Admission {
	return &core.Admission{Queue: r.Queue, Driver: r.Driver, Executors: maps.Clone(r.Executors)}
}

// members is how many members r plans: its driver and its executors.
func (r Reservation) members() int { return 1 + int(plannedExecutors(r.Executors)) }

// keepsNodes reports whether r still keeps node capacity for its members not bound yet: until
// o.ReservationTimeout after the admission (for ever when it is not positive). Its queue's
// quota is kept either way, until the run ends.
func (r Reservation) keepsNodes(o snapshotOptions) bool {
	return o.ReservationTimeout <= 0 || o.Now.Sub(r.Admitted) < o.ReservationTimeout
}

// ReservationName is the name of the Reservation of the workload key: an application's own
// name, a session's name with ".sparkconnect" (an application and a session may share a name).
func ReservationName(key core.Key) string { return reservation.Name(string(key.Kind), key.Name) }

// executorMember names the member of the executor of id i (from 1).
func executorMember(i int) string { return schedv1alpha1.MemberRoleExecutor + "-" + strconv.Itoa(i) }

// reservationObject is r as stored for the workload o, kept by e: owned by o's object, so the
// garbage collector deletes it with the workload.
func reservationObject(o *object, r Reservation, e Enforcement) (*schedv1alpha1.Reservation, error) {
	if e == "" {
		e = EnforcementAdvisory
	}
	owner, err := ownerOf(o.Workload)
	if err != nil {
		return nil, err
	}
	members := []schedv1alpha1.ReservationMember{{Name: schedv1alpha1.MemberRoleDriver, Role: schedv1alpha1.MemberRoleDriver,
		Node: r.Driver, Requests: r.DriverRequests.DeepCopy()}}
	for i, node := range plannedSlots(r) {
		members = append(members, schedv1alpha1.ReservationMember{Name: executorMember(i + 1), Role: schedv1alpha1.MemberRoleExecutor,
			Node: node, Requests: r.ExecutorRequests.DeepCopy()})
	}
	return &schedv1alpha1.Reservation{
		ObjectMeta: metav1.ObjectMeta{Namespace: o.Key.Namespace, Name: ReservationName(o.Key),
			Labels: map[string]string{LabelQueue: r.Queue}, OwnerReferences: []metav1.OwnerReference{owner}},
		Spec: schedv1alpha1.ReservationSpec{
			Workload: schedv1alpha1.WorkloadReference{Kind: string(o.Key.Kind), Name: o.Key.Name},
			Queue:    r.Queue, Run: r.SubmissionID, Enforcement: string(e), PriorityClassName: r.PriorityClassName,
			Admitted: metav1.NewTime(r.Admitted), Members: members,
		},
	}, nil
}

// ownerOf refers to w's SparkApplication or SparkConnect, as the controller of its reservation.
func ownerOf(w scheduler.Workload) (metav1.OwnerReference, error) {
	ref := metav1.OwnerReference{Kind: string(w.Key.Kind), Controller: ptr.To(true)}
	switch w.Key.Kind {
	case scheduler.KindApplication:
		ref.APIVersion = v1beta2.GroupVersion.String()
	case scheduler.KindSession:
		ref.APIVersion = v1alpha1.GroupVersion.String()
	default:
		return ref, fmt.Errorf("workload %s is of kind %q, which has no reservation", w.Key, w.Key.Kind)
	}
	if w.Object == nil || w.Object.GetUID() == "" {
		return ref, fmt.Errorf("workload %s has no stored object to own its reservation", w.Key)
	}
	ref.Name, ref.UID = w.Object.GetName(), w.Object.GetUID()
	return ref, nil
}

// reservationFrom reads a stored Reservation, the one of the workload object owner: false when
// another object (an earlier workload of the same name) owns it or it does not read.
func reservationFrom(obj *schedv1alpha1.Reservation, owner client.Object) (Reservation, bool) {
	if !ownedBy(obj, owner.GetUID()) {
		return Reservation{}, false
	}
	return ReservationOf(obj)
}

// ReservationOf reads a stored Reservation, whoever owns it: false when it is being deleted or
// does not read (a plan whose members are not in the order the scheduler writes them).
func ReservationOf(obj *schedv1alpha1.Reservation) (Reservation, bool) {
	if !obj.DeletionTimestamp.IsZero() || obj.Spec.Run == "" {
		return Reservation{}, false
	}
	r := Reservation{SubmissionID: obj.Spec.Run, Queue: obj.Spec.Queue, Admitted: obj.Spec.Admitted.Time,
		PriorityClassName: obj.Spec.PriorityClassName, UID: obj.UID, Status: obj.Status,
		Enforcement: Enforcement(obj.Spec.Enforcement), Held: reservation.Held(obj)}
	r.TakenOn, _ = reservation.TakenOn(obj)
	executors := 0
	for _, m := range obj.Spec.Members {
		switch m.Role {
		case schedv1alpha1.MemberRoleDriver:
			r.Driver, r.DriverRequests = m.Node, m.Requests
		case schedv1alpha1.MemberRoleExecutor:
			if r.Executors == nil {
				r.Executors = map[string]int32{}
			}
			r.Executors[m.Node]++
			r.ExecutorRequests = m.Requests
			executors++
			if m.Name != executorMember(executors) {
				// The executor of id i takes the i-th slot in plannedSlots' order; a plan
				// stored in any other order does not say which executor goes where.
				return Reservation{}, false
			}
		}
	}
	if r.Driver == "" || !slices.Equal(plannedSlots(r), memberNodes(obj, schedv1alpha1.MemberRoleExecutor)) {
		return Reservation{}, false
	}
	return r, true
}

func memberNodes(obj *schedv1alpha1.Reservation, role string) []string {
	var nodes []string
	for _, m := range obj.Spec.Members {
		if m.Role == role {
			nodes = append(nodes, m.Node)
		}
	}
	return nodes
}

func ownedBy(obj client.Object, uid types.UID) bool {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.UID == uid {
			return true
		}
	}
	return false
}

// legacyReservation reads the reservation a release before the Reservation API stored on the
// workload's object; false when it has none or it does not read.
func legacyReservation(obj client.Object) (Reservation, bool) {
	v, ok := obj.GetAnnotations()[AnnotationAdmission]
	if !ok {
		return Reservation{}, false
	}
	var r Reservation
	if err := json.Unmarshal([]byte(v), &r); err != nil || r.SubmissionID == "" || r.Driver == "" {
		return Reservation{}, false
	}
	return r, true
}

// GetReservation reads the reservation of the workload obj (a SparkApplication or a
// SparkConnect) from c: false when it has none.
func GetReservation(ctx context.Context, c client.Reader, obj client.Object) (Reservation, bool, error) {
	key := scheduler.WorkloadKey{Kind: scheduler.KindApplication, NamespacedName: client.ObjectKeyFromObject(obj)}
	if _, ok := obj.(*v1alpha1.SparkConnect); ok {
		key.Kind = scheduler.KindSession
	}
	var stored schedv1alpha1.Reservation
	if err := c.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: ReservationName(key)}, &stored); err != nil {
		if apierrors.IsNotFound(err) {
			return Reservation{}, false, nil
		}
		return Reservation{}, false, err
	}
	r, ok := reservationFrom(&stored, obj)
	return r, ok, nil
}

// nodesOf lists the nodes r plans members on, by name, comma-separated.
func nodesOf(r Reservation) string {
	nodes := map[string]bool{r.Driver: true}
	for n := range r.Executors {
		nodes[n] = true
	}
	return strings.Join(slices.Sorted(maps.Keys(nodes)), ",")
}

// Pods turns a reservation into pod settings: the driver on its planned node, the executors
// gated until the gang scheduler gives each its node (GateExecutor), and every pod labelled
// with the queue. The executor template names no nodes: the gate alone keeps executors back,
// and each one's node is set as it is released, a planned one or, beyond the plan (dynamic
// allocation), any node its own placement rules allow. With placeholders, the driver is gated
// too: it takes its placeholder's place in one step (placeholders.go).
func (r Reservation) Pods(e Enforcement) sparkpod.RoleScheduling {
	labels := map[string]string{LabelQueue: r.Queue}
	pods := sparkpod.RoleScheduling{
		Driver: sparkpod.Scheduling{Labels: labels, NodeNames: []string{r.Driver}},
		Executor: sparkpod.Scheduling{Labels: maps.Clone(labels),
			SchedulingGates: []corev1.PodSchedulingGate{{Name: GateExecutor}}},
	}
	if e == EnforcementPlaceholders {
		pods.Driver.SchedulingGates = []corev1.PodSchedulingGate{{Name: GateExecutor}}
	}
	return pods
}
