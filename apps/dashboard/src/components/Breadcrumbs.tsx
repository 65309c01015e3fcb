import { Fragment } from 'react';
import { Link } from 'wouter';

/** The way back up: Projects, then the project and the service where the page lies within them. */
export function Breadcrumbs({ projectId, serviceId }: { projectId?: string; serviceId?: string }) {
  const trail: [string, string][] = [['/', 'Projects']];
  if (projectId) trail.push([`/projects/${projectId}`, 'Project']);
  if (projectId && serviceId)
    trail.push([`/projects/${projectId}/services/${serviceId}`, 'Service']);
  return (
    <nav aria-label="Breadcrumb" className="crumbs">
      {trail.map(([href, text], i) => (
        <Fragment key={href}>
          {i > 0 && ' / '}
          <Link href={href}>{text}</Link>
        </Fragment>
      ))}
    </nav>
  );
}
