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
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/spf13/cobra"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

type createOptions struct {
	*rootOptions
	filename       string
	from           string
	deleteExisting bool
	logs           bool
	uploadTo       string
	timeout        time.Duration
	now            func() time.Time
}

func newCreateCommand(root *rootOptions) *cobra.Command {
	o := &createOptions{rootOptions: root, now: time.Now}
	cmd := &cobra.Command{
		Use:   "create [FILE | -f FILE | --from SCHEDULED_APP]",
		Short: "Create a SparkApplication from a YAML file or from a ScheduledSparkApplication",
		Long: `Create a SparkApplication from a YAML manifest (a file, or standard input with -f -), or
start a one-off run of a ScheduledSparkApplication's template with --from. The run is named
<scheduled>-manual-<unix time>.

The main application file and the dependencies (spec.deps.jars, files, pyFiles, archives) must
be readable from the cluster: URLs such as https://, s3a://, gs:// or hdfs://, or local:// paths
inside the image. Files on this machine are refused; uploading them (--upload-to) is not
supported yet.`,
		Example: `  sparkctl create spark-pi.yaml
  cat spark-pi.yaml | sparkctl create -f -
  sparkctl create spark-pi.yaml --delete --logs
  sparkctl create --from nightly-report`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				if o.filename != "" {
					return errors.New("give the manifest either as an argument or with -f, not both")
				}
				o.filename = args[0]
			}
			return o.run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.filename, "filename", "f", "", `the manifest to create; "-" reads standard input`)
	f.StringVar(&o.from, "from", "", "create a one-off run from this ScheduledSparkApplication's template")
	f.BoolVar(&o.deleteExisting, "delete", false, "delete an existing application of the same name first, and wait until it is gone")
	f.BoolVar(&o.logs, "logs", false, "stream the driver's log once it runs, until it ends")
	f.StringVar(&o.uploadTo, "upload-to", "", "upload local files to this URL (not supported yet)")
	f.DurationVar(&o.timeout, "timeout", 2*time.Minute, "how long --delete waits for the existing application to go away")
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
	_ = cmd.RegisterFlagCompletionFunc("from", root.completeScheduledApps)
	return cmd
}

func (o *createOptions) run(ctx context.Context) error {
	if o.uploadTo != "" {
		return errors.New("--upload-to: uploading local files is not supported yet; copy them where the cluster can read them and refer to them by URL")
	}
	if (o.filename == "") == (o.from == "") {
		return errors.New("give either a manifest (FILE or -f FILE) or --from SCHEDULED_APP")
	}
	c, err := o.clients()
	if err != nil {
		return err
	}
	var app *v1beta2.SparkApplication
	if o.from != "" {
		app, err = o.fromScheduled(ctx, c)
	} else {
		app, err = o.fromFile(c)
	}
	if err != nil {
		return err
	}
	if err := checkRemoteFiles(&app.Spec); err != nil {
		return err
	}
	// From here on the namespace is the application's.
	c.namespace = app.Namespace

	if o.deleteExisting {
		if err := o.deleteAndWait(ctx, c, app.Name); err != nil {
			return err
		}
	}
	if err := c.ctrl.Create(ctx, app); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("sparkapplication %q already exists in namespace %q (use --delete to replace it)", app.Name, app.Namespace)
		}
		return fmt.Errorf("creating sparkapplication %q in namespace %q: %s", app.Name, app.Namespace, apiMessage(err))
	}
	fmt.Fprintf(o.streams.Out, "sparkapplication %q created\n", app.Name)
	if !o.logs {
		return nil
	}
	pod, err := waitForDriver(ctx, c, app.Name, o.streams.ErrOut)
	if err != nil {
		return err
	}
	return streamLog(ctx, c, pod, corev1.PodLogOptions{Container: driverContainer(pod), Follow: true}, o.streams.Out)
}

// fromFile reads and decodes the manifest, and settles its namespace as kubectl does: -n, or
// the manifest's, or the context's; a manifest and -n that disagree are an error.
func (o *createOptions) fromFile(c *clients) (*v1beta2.SparkApplication, error) {
	var data []byte
	var err error
	if o.filename == "-" {
		data, err = io.ReadAll(o.streams.In)
	} else {
		data, err = os.ReadFile(o.filename)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the manifest: %w", err)
	}
	source := o.filename
	if source == "-" {
		source = "standard input"
	}
	app, err := decodeApp(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	switch {
	case app.Namespace == "":
		app.Namespace = c.namespace
	case c.explicitNamespace && app.Namespace != c.namespace:
		return nil, fmt.Errorf("%s: the manifest's namespace %q does not match the namespace %q given with -n", source, app.Namespace, c.namespace)
	}
	return app, nil
}

// decodeApp decodes one SparkApplication manifest, refusing other kinds and unknown fields.
func decodeApp(data []byte) (*v1beta2.SparkApplication, error) {
	docs := 0
	for _, doc := range strings.Split("\n"+string(data), "\n---") {
		if strings.TrimSpace(stripComments(doc)) != "" {
			docs++
		}
	}
	if docs != 1 {
		return nil, fmt.Errorf("want exactly one SparkApplication manifest, found %d documents", docs)
	}
	var meta metav1.TypeMeta
	if err := yaml.Unmarshal(data, &meta); err != nil {
		return nil, fmt.Errorf("not a valid YAML or JSON manifest: %w", err)
	}
	if meta.Kind != "SparkApplication" || meta.APIVersion != v1beta2.GroupVersion.String() {
		return nil, fmt.Errorf("want kind SparkApplication of apiVersion %s, found kind %q of apiVersion %q",
			v1beta2.GroupVersion, meta.Kind, meta.APIVersion)
	}
	app := &v1beta2.SparkApplication{}
	if err := yaml.UnmarshalStrict(data, app); err != nil {
		return nil, fmt.Errorf("decoding the SparkApplication: %w", err)
	}
	if app.Name == "" && app.GenerateName == "" {
		return nil, errors.New("the SparkApplication has no metadata.name")
	}
	// What the server owns is not the user's to set.
	app.ResourceVersion, app.UID = "", ""
	app.Status = v1beta2.SparkApplicationStatus{}
	return app, nil
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// fromScheduled builds a one-off run of a ScheduledSparkApplication. The run carries the
// scheduled application's labels and LabelScheduledAppName, as scheduled runs do, and is owned
// by it (so it goes when the scheduled application goes) without being controlled by it, so
// the scheduler neither counts it against its concurrency policy nor prunes it.
func (o *createOptions) fromScheduled(ctx context.Context, c *clients) (*v1beta2.SparkApplication, error) {
	ssa := &v1beta2.ScheduledSparkApplication{}
	if err := c.ctrl.Get(ctx, client.ObjectKey{Namespace: c.namespace, Name: o.from}, ssa); err != nil {
		return nil, objectError(err, "scheduledsparkapplication", c.namespace, o.from)
	}
	labels := map[string]string{}
	for k, v := range ssa.Labels {
		labels[k] = v
	}
	labels[v1beta2.LabelScheduledAppName] = ssa.Name
	return &v1beta2.SparkApplication{
		ObjectMeta: metav1.ObjectMeta{
			Name:      manualRunName(ssa.Name, o.now()),
			Namespace: ssa.Namespace,
			Labels:    labels,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: v1beta2.GroupVersion.String(),
				Kind:       "ScheduledSparkApplication",
				Name:       ssa.Name,
				UID:        ssa.UID,
			}},
		},
		Spec: *ssa.Spec.Template.DeepCopy(),
	}, nil
}

// manualRunName is "<scheduled>-manual-<unix seconds>", shortened to a valid name if needed.
func manualRunName(scheduled string, t time.Time) string {
	return v1beta2.ShortName(scheduled, fmt.Sprintf("-manual-%d", t.Unix()))
}

// checkRemoteFiles refuses files that exist only on this machine: the driver, running in the
// cluster, could not read them.
func checkRemoteFiles(spec *v1beta2.SparkApplicationSpec) error {
	var local []string
	check := func(field, path string) {
		if isLocalFile(path) {
			local = append(local, fmt.Sprintf("%s %q", field, path))
		}
	}
	check("spec.mainApplicationFile", spec.MainApplicationFile)
	for _, l := range []struct {
		field string
		paths []string
	}{
		{"spec.deps.jars", spec.Deps.Jars},
		{"spec.deps.files", spec.Deps.Files},
		{"spec.deps.pyFiles", spec.Deps.PyFiles},
		{"spec.deps.archives", spec.Deps.Archives},
	} {
		for i, p := range l.paths {
			check(fmt.Sprintf("%s[%d]", l.field, i), p)
		}
	}
	if len(local) == 0 {
		return nil
	}
	return fmt.Errorf("%s: a local file the cluster cannot read; give a URL (https://, s3a://, hdfs://, ...) or a local:// path inside the image (uploading with --upload-to is not supported yet)",
		strings.Join(local, ", "))
}

// isLocalFile reports whether path names a file on this machine: a plain path or a file:// URL.
// local:// means a path inside the container image, which is fine.
func isLocalFile(path string) bool {
	if path == "" {
		return false
	}
	u, err := url.Parse(path)
	if err != nil {
		return !strings.Contains(path, "://")
	}
	return u.Scheme == "" || u.Scheme == "file"
}

// deleteAndWait deletes the application if it exists and waits until it is gone.
func (o *createOptions) deleteAndWait(ctx context.Context, c *clients, name string) error {
	app := &v1beta2.SparkApplication{ObjectMeta: metav1.ObjectMeta{Namespace: c.namespace, Name: name}}
	err := c.ctrl.Delete(ctx, app, client.PropagationPolicy(metav1.DeletePropagationBackground))
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("deleting sparkapplication %q in namespace %q: %s", name, c.namespace, apiMessage(err))
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, o.timeout, true, func(ctx context.Context) (bool, error) {
		err := c.ctrl.Get(ctx, client.ObjectKeyFromObject(app), &v1beta2.SparkApplication{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if err != nil {
		return fmt.Errorf("waiting for sparkapplication %q in namespace %q to be deleted: %w", name, c.namespace, err)
	}
	fmt.Fprintf(o.streams.Out, "sparkapplication %q deleted\n", name)
	return nil
}

// waitForDriver waits until the application's driver pod has started (or already ended) and
// returns it; an application that fails before its driver starts is an error.
func waitForDriver(ctx context.Context, c *clients, name string, progress io.Writer) (*corev1.Pod, error) {
	var pod *corev1.Pod
	told := false
	err := wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		app, err := c.getApp(ctx, name)
		if err != nil {
			return false, err
		}
		p := &corev1.Pod{}
		err = c.ctrl.Get(ctx, client.ObjectKey{Namespace: app.Namespace, Name: driverPodName(app)}, p)
		switch {
		case err == nil && p.Status.Phase != corev1.PodPending && p.Status.Phase != "":
			pod = p
			return true, nil
		case err != nil && !apierrors.IsNotFound(err):
			return false, err
		}
		switch app.Status.AppState.State {
		case v1beta2.ApplicationStateFailed, v1beta2.ApplicationStateFailedSubmission:
			// Failed with no started driver: there is no log to read.
			return false, fmt.Errorf("sparkapplication %q is %s: %s", name, app.Status.AppState.State, orNone(app.Status.AppState.ErrorMessage))
		}
		if !told {
			fmt.Fprintf(progress, "waiting for driver pod %q to start\n", driverPodName(app))
			told = true
		}
		return false, nil
	})
	return pod, err
}
