/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkconf

import (
	"fmt"
	"path"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// confVolume is a volume mount of the main container that Spark properties can express.
type confVolume struct {
	kind           string // Spark's volume type: hostPath, emptyDir, nfs, persistentVolumeClaim
	mount          corev1.VolumeMount
	options        map[string]string
	volumeReadOnly bool
}

// sparkVolumeKind maps a volume to Spark's volume type; ok is false for sources Spark has no
// properties for (they go into the pod template). A volume without any source is an error.
func sparkVolumeKind(v *corev1.Volume) (kind string, options map[string]string, readOnly, ok bool, err error) {
	switch {
	case v.HostPath != nil:
		o := map[string]string{"path": v.HostPath.Path}
		if v.HostPath.Type != nil && *v.HostPath.Type != "" {
			o["type"] = string(*v.HostPath.Type)
		}
		return "hostPath", o, false, true, nil
	case v.EmptyDir != nil:
		o := map[string]string{}
		if v.EmptyDir.Medium != "" {
			o["medium"] = string(v.EmptyDir.Medium)
		}
		if v.EmptyDir.SizeLimit != nil {
			o["sizeLimit"] = v.EmptyDir.SizeLimit.String()
		}
		return "emptyDir", o, false, true, nil
	case v.NFS != nil:
		return "nfs", map[string]string{"server": v.NFS.Server, "path": v.NFS.Path}, v.NFS.ReadOnly, true, nil
	case v.PersistentVolumeClaim != nil:
		return "persistentVolumeClaim", map[string]string{"claimName": v.PersistentVolumeClaim.ClaimName}, v.PersistentVolumeClaim.ReadOnly, true, nil
	}
	if v.VolumeSource == (corev1.VolumeSource{}) {
		return "", nil, false, false, fmt.Errorf("spec.volumes[%s]: no volume source set (unknown volume type)", v.Name)
	}
	return "", nil, false, false, nil
}

// confVolumeMounts splits the main container's mounts: those whose volume Spark can declare
// itself from properties, returned here, and the rest, which belong in the pod (template). A
// volume also mounted by a sidecar or init container must be declared in the template, or the
// pod would declare it twice.
func confVolumeMounts(app *v1beta2.SparkApplication, r Role) ([]confVolume, error) {
	p := r.PodSpec(app)
	volumes := VolumesByName(app)
	shared := MountedByOthers(p)
	var out []confVolume
	for _, m := range p.VolumeMounts {
		v, ok := volumes[m.Name]
		if !ok {
			return nil, fmt.Errorf("spec.%s.volumeMounts: volume %q is not declared in spec.volumes", r, m.Name)
		}
		if m.MountPath == "" {
			return nil, fmt.Errorf("spec.%s.volumeMounts[%s]: mountPath is empty", r, m.Name)
		}
		kind, options, readOnly, ok, err := sparkVolumeKind(v)
		if err != nil {
			return nil, err
		}
		if !ok || shared[m.Name] {
			continue
		}
		out = append(out, confVolume{kind: kind, mount: m, options: options, volumeReadOnly: readOnly})
	}
	return out, nil
}

// ConfVolumes returns the names of the role's main-container mounts that the properties
// declare (spark.kubernetes.<role>.volumes.*): Spark creates those volumes, so a pod template
// must not declare them again.
func ConfVolumes(app *v1beta2.SparkApplication, r Role) (map[string]bool, error) {
	mounts, err := confVolumeMounts(app, r)
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(mounts))
	for _, m := range mounts {
		out[m.mount.Name] = true
	}
	return out, nil
}

// VolumesByName indexes spec.volumes.
func VolumesByName(app *v1beta2.SparkApplication) map[string]*corev1.Volume {
	out := make(map[string]*corev1.Volume, len(app.Spec.Volumes))
	for i := range app.Spec.Volumes {
		out[app.Spec.Volumes[i].Name] = &app.Spec.Volumes[i]
	}
	return out
}

// MountedByOthers returns the names of the volumes the role's sidecars and init containers
// mount.
func MountedByOthers(p *v1beta2.SparkPodSpec) map[string]bool {
	out := map[string]bool{}
	for _, cs := range [][]corev1.Container{p.Sidecars, p.InitContainers} {
		for _, c := range cs {
			for _, m := range c.VolumeMounts {
				out[m.Name] = true
			}
		}
	}
	return out
}

// Where a typed Secret's key file is, and the environment variable the client libraries read
// its location from.
const (
	EnvGoogleCredentials   = "GOOGLE_APPLICATION_CREDENTIALS"
	GCPKeyFileName         = "key.json"
	EnvHadoopTokenLocation = "HADOOP_TOKEN_FILE_LOCATION"
	HadoopTokenFileName    = "hadoop.token"
)

// SecretEnv checks the i-th of role's secrets and returns the environment variable pointing at
// its key file: GOOGLE_APPLICATION_CREDENTIALS for a GCP service account, HADOOP_TOKEN_FILE_LOCATION
// for a Hadoop delegation token, none (an empty name) for a generic Secret. Spark receives it as
// a property; the pod settings write it on pods that Spark does not build.
func SecretEnv(r Role, i int, s v1beta2.SecretInfo) (corev1.EnvVar, error) {
	if s.Name == "" || s.Path == "" {
		return corev1.EnvVar{}, fmt.Errorf("spec.%s.secrets[%d]: needs a name and a path (got name %q, path %q)", r, i, s.Name, s.Path)
	}
	switch s.Type {
	case v1beta2.SecretTypeGCPServiceAccount:
		return corev1.EnvVar{Name: EnvGoogleCredentials, Value: path.Join(s.Path, GCPKeyFileName)}, nil
	case v1beta2.SecretTypeHadoopDelegationToken:
		return corev1.EnvVar{Name: EnvHadoopTokenLocation, Value: path.Join(s.Path, HadoopTokenFileName)}, nil
	case v1beta2.SecretTypeGeneric, "":
		return corev1.EnvVar{}, nil
	}
	return corev1.EnvVar{}, fmt.Errorf("spec.%s.secrets[%d].secretType: unknown type %q (want %s, %s or %s)", r, i, s.Type,
		v1beta2.SecretTypeGCPServiceAccount, v1beta2.SecretTypeHadoopDelegationToken, v1beta2.SecretTypeGeneric)
}

// CheckEnvSecretKeyRef checks the entry key of role's deprecated envSecretKeyRefs.
func CheckEnvSecretKeyRef(r Role, key string, ref v1beta2.NameKey) error {
	if ref.Name == "" || ref.Key == "" {
		return fmt.Errorf("spec.%s.envSecretKeyRefs[%s]: needs a secret name and a key", r, key)
	}
	return nil
}
