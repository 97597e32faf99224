/**
 * Storage for the local control plane: a default StorageClass `standard` and
 * a pool of pre-created PersistentVolumes, so the PersistentVolumeClaims of
 * StatefulSets bind through kube-controller-manager's volume binder as they
 * would on a cluster with a provisioner. No volume is ever mounted: kwok
 * runs no containers.
 *
 * @module
 */
import type { V1PersistentVolume, V1StorageClass } from "@kubernetes/client-node";

/** Name of the default StorageClass. */
export const STORAGE_CLASS = "standard";

/** The default StorageClass; it provisions nothing, the pool below is all there is. */
export function storageClass(): V1StorageClass {
  return {
    apiVersion: "storage.k8s.io/v1",
    kind: "StorageClass",
    metadata: {
      name: STORAGE_CLASS,
      annotations: { "storageclass.kubernetes.io/is-default-class": "true" },
    },
    provisioner: "kubernetes.io/no-provisioner",
    volumeBindingMode: "Immediate",
    reclaimPolicy: "Retain",
  };
}

/** `count` volumes of 100Gi each, named `kwok-pv-<i>`. */
export function volumePool(count: number): V1PersistentVolume[] {
  return Array.from({ length: count }, (_, i) => ({
    apiVersion: "v1",
    kind: "PersistentVolume",
    metadata: { name: `kwok-pv-${i}`, labels: { type: "kwok" } },
    spec: {
      storageClassName: STORAGE_CLASS,
      capacity: { storage: "100Gi" },
      accessModes: ["ReadWriteOnce"],
      persistentVolumeReclaimPolicy: "Retain",
      hostPath: { path: `/var/lib/kwok-pv-${i}` },
    },
  }));
}
