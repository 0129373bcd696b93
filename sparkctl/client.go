/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkctl

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/spf13/cobra"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// scheme knows the built-in kinds and the operator's.
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := v1beta2.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

// rootOptions are the flags every command shares: kubectl's own (--kubeconfig, --context,
// --namespace, --server, --token, ..., from cli-runtime), and the clients built from them.
type rootOptions struct {
	streams IOStreams
	flags   *genericclioptions.ConfigFlags
}

// clients are what a command talks to the cluster with.
type clients struct {
	config    *rest.Config
	kube      kubernetes.Interface
	ctrl      client.WithWatch
	namespace string
	// explicitNamespace is true when -n was given, not taken from the kubeconfig context.
	explicitNamespace bool
}

// quietControllerRuntime gives controller-runtime's logger a sink, which it otherwise
// complains about on standard error; sparkctl reports errors itself.
var quietControllerRuntime sync.Once

func (o *rootOptions) clients() (*clients, error) {
	quietControllerRuntime.Do(func() { ctrllog.SetLogger(logr.Discard()) })
	// As kubectl: --kubeconfig, else $KUBECONFIG (a list of files, merged), else ~/.kube/config,
	// else the in-cluster configuration.
	cc := o.flags.ToRawKubeConfigLoader()
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the cluster configuration: %w", err)
	}
	ns, explicit, err := cc.Namespace()
	if err != nil {
		return nil, fmt.Errorf("finding the namespace: %w", err)
	}
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "sparkctl"
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = 50, 100
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	ctrl, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	return &clients{config: cfg, kube: kube, ctrl: ctrl, namespace: ns,
		explicitNamespace: explicit}, nil
}

// getApp fetches a SparkApplication, turning "not found" into a one-line error naming it.
func (c *clients) getApp(ctx context.Context, name string) (*v1beta2.SparkApplication, error) {
	app := &v1beta2.SparkApplication{}
	if err := c.ctrl.Get(ctx, client.ObjectKey{Namespace: c.namespace, Name: name}, app); err != nil {
		return nil, objectError(err, "sparkapplication", c.namespace, name)
	}
	return app, nil
}

// objectError rewrites an API error about one object into a short message naming it.
func objectError(err error, kind, namespace, name string) error {
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("%s %q not found in namespace %q", kind, name, namespace)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("not allowed to access %s %q in namespace %q: %s", kind, name, namespace, apiMessage(err))
	}
	return err
}

// apiMessage is the message of an API status error, or the error itself.
func apiMessage(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Message != "" {
		return status.Status().Message
	}
	return err.Error()
}

// driverPodName is the driver pod the operator reports, or the one it will create.
func driverPodName(app *v1beta2.SparkApplication) string {
	if app.Status.DriverInfo.PodName != "" {
		return app.Status.DriverInfo.PodName
	}
	return app.DriverPodName()
}

// appPods lists the pods the operator and the driver labelled as the application's.
func (c *clients) appPods(ctx context.Context, app *v1beta2.SparkApplication) ([]corev1.Pod, error) {
	var pods corev1.PodList
	if err := c.ctrl.List(ctx, &pods, client.InNamespace(app.Namespace),
		client.MatchingLabels{v1beta2.LabelAppName: app.Name}); err != nil {
		return nil, fmt.Errorf("listing the pods of sparkapplication %q: %w", app.Name, err)
	}
	return pods.Items, nil
}

// completeApps completes SparkApplication names in the selected namespace.
func (o *rootOptions) completeApps(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return o.completeNames(cmd, &v1beta2.SparkApplicationList{}, toComplete)
}

// completeScheduledApps completes ScheduledSparkApplication names for --from.
func (o *rootOptions) completeScheduledApps(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return o.completeNames(cmd, &v1beta2.ScheduledSparkApplicationList{}, toComplete)
}

// completeNames offers the names of the objects of list's kind in the selected namespace that
// start with toComplete.
func (o *rootOptions) completeNames(cmd *cobra.Command, list client.ObjectList, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	c, err := o.clients()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	if err := c.ctrl.List(cmd.Context(), list, client.InNamespace(c.namespace)); err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	var names []cobra.Completion
	err = meta.EachListItem(list, func(obj runtime.Object) error {
		if m, err := meta.Accessor(obj); err == nil && strings.HasPrefix(m.GetName(), toComplete) {
			names = append(names, m.GetName())
		}
		return nil
	})
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}

// completeNamespaces completes namespace names for -n.
func (o *rootOptions) completeNamespaces(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	c, err := o.clients()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	var list corev1.NamespaceList
	if err := c.ctrl.List(cmd.Context(), &list); err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	var names []cobra.Completion
	for _, ns := range list.Items {
		if strings.HasPrefix(ns.Name, toComplete) {
			names = append(names, ns.Name)
		}
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}
