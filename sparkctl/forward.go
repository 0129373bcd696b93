/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkctl

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/spf13/cobra"
)

type forwardOptions struct {
	*rootOptions
	address    string
	localPort  int
	remotePort int
}

func newForwardCommand(root *rootOptions) *cobra.Command {
	o := &forwardOptions{rootOptions: root}
	cmd := &cobra.Command{
		Use:   "forward NAME",
		Short: "Forward a local port to the Spark UI of a running driver",
		Long: `Forward a local port to a port of the application's driver pod, by default the Spark UI
(4040), until interrupted or until the driver ends. --local-port 0 picks a free port.`,
		Example:           `  sparkctl forward spark-pi --local-port 8080`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: root.completeApps,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.Context(), args[0])
		},
	}
	cmd.Flags().StringVar(&o.address, "address", "127.0.0.1", "the local address to listen on")
	cmd.Flags().IntVar(&o.localPort, "local-port", 4040, "the local port to listen on (0: any free port)")
	cmd.Flags().IntVar(&o.remotePort, "remote-port", 4040, "the driver's port to forward to")
	return cmd
}

func (o *forwardOptions) run(ctx context.Context, name string) error {
	if o.localPort < 0 || o.localPort > 65535 || o.remotePort < 1 || o.remotePort > 65535 {
		return fmt.Errorf("ports must be between 1 and 65535 (0 for the local port), got %d and %d", o.localPort, o.remotePort)
	}
	c, err := o.clients()
	if err != nil {
		return err
	}
	app, err := c.getApp(ctx, name)
	if err != nil {
		return err
	}
	pod, err := runningDriver(ctx, c, app)
	if err != nil {
		return err
	}
	return o.forward(ctx, c, app, pod)
}

// runningDriver is app's driver pod, or why it cannot be reached.
func runningDriver(ctx context.Context, c *clients, app *v1beta2.SparkApplication) (*corev1.Pod, error) {
	podName := driverPodName(app)
	pod, err := c.kube.CoreV1().Pods(app.Namespace).Get(ctx, podName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("sparkapplication %q in namespace %q has no driver pod (state %s)", app.Name, app.Namespace, stateString(app.Status.AppState.State))
	}
	if err != nil {
		return nil, err
	}
	if pod.Status.Phase != corev1.PodRunning {
		return nil, fmt.Errorf("driver pod %q of sparkapplication %q is not running (phase %s)", podName, app.Name, pod.Status.Phase)
	}
	return pod, nil
}

// forward forwards the local port to the driver pod's until the context ends or the pod does.
func (o *forwardOptions) forward(ctx context.Context, c *clients, app *v1beta2.SparkApplication, pod *corev1.Pod) error {
	transport, upgrader, err := spdy.RoundTripperFor(c.config)
	if err != nil {
		return err
	}
	url := c.kube.CoreV1().RESTClient().Post().Resource("pods").Namespace(pod.Namespace).Name(pod.Name).
		SubResource("portforward").URL()
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, url)

	stop := make(chan struct{})
	ready := make(chan struct{})
	fw, err := portforward.NewOnAddresses(dialer, []string{o.address},
		[]string{fmt.Sprintf("%d:%d", o.localPort, o.remotePort)}, stop, ready, io.Discard, o.streams.ErrOut)
	if err != nil {
		return err
	}

	done := make(chan error, 1)
	go func() { done <- fw.ForwardPorts() }()

	// Stop on Ctrl-C (the context) or when the driver ends: there is nothing left to reach.
	watchCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	ended := make(chan struct{})
	go func() {
		if podEnded(watchCtx, c, pod) {
			close(ended)
		}
	}()

	select {
	case <-ready:
		ports, err := fw.GetPorts()
		if err != nil {
			close(stop)
			<-done
			return err
		}
		host := o.address
		if host == "" {
			host = "127.0.0.1"
		}
		fmt.Fprintf(o.streams.Out, "Forwarding from http://%s -> %d\n",
			net.JoinHostPort(host, strconv.Itoa(int(ports[0].Local))), ports[0].Remote)
	case err := <-done:
		return fmt.Errorf("forwarding to pod %q: %w", pod.Name, err)
	}

	select {
	case <-ctx.Done():
		close(stop)
		<-done
		return nil
	case <-ended:
		close(stop)
		<-done
		return fmt.Errorf("driver pod %q of sparkapplication %q ended", pod.Name, app.Name)
	case err := <-done:
		if err != nil {
			return fmt.Errorf("forwarding to pod %q: %w", pod.Name, err)
		}
		return fmt.Errorf("forwarding to pod %q stopped", pod.Name)
	}
}
